from tensile_lite.sample import path

print(path())
