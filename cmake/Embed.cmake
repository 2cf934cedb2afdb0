# npl_embed(OUT SYMBOL FILES...): generate OUT, a C file holding every file's
# bytes in `const struct npl_embedded SYMBOL[]` (name relative to the source
# tree, data NUL-terminated, length) and `SYMBOL_count`. Regenerated whenever
# one of the files changes.
function(npl_embed out symbol)
  set(abs)
  foreach(f ${ARGN})
    list(APPEND abs ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  string(REPLACE ";" "|" files "${ARGN}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}
            "-DFILES=${files}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedGen.cmake
    DEPENDS ${abs} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/EmbedGen.cmake
    COMMENT "Embedding ${symbol}"
    VERBATIM)
endfunction()
