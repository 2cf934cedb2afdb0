import npl_fake

npl_fake.main("server")
