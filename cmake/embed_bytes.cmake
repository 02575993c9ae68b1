# cmake -DIN=FILE -DOUT=FILE.cpp -DNAME=kSymbol -P embed_bytes.cmake
# Writes FILE's bytes as `extern const unsigned char NAME[]` and `NAME##Size` in namespace
# bowline::engine, so a binary can carry a small file without installing it.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" chars)
math(EXPR size "${chars} / 2")
if(size EQUAL 0)
  set(body "0")
else()
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
endif()
file(WRITE "${OUT}.tmp"
     "// Generated from ${IN} by cmake/embed_bytes.cmake: do not edit.\n"
     "#include <cstddef>\n"
     "namespace bowline::engine {\n"
     "extern const unsigned char ${NAME}[] = {${body}};\n"
     "extern const std::size_t ${NAME}Size = ${size};\n"
     "}  // namespace bowline::engine\n")
file(RENAME "${OUT}.tmp" "${OUT}")
