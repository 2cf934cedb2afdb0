import npl_fake

npl_fake.main("router")
