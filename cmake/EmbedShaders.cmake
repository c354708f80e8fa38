# Embeds every file of shaders/ into a generated C++ source, so both builds run the same GLSL text
# and the binaries need no shader files at run time.
file(GLOB GPT2_SHADER_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/shaders/*.glsl ${PROJECT_SOURCE_DIR}/shaders/*.frag ${PROJECT_SOURCE_DIR}/shaders/*.vert)
set(GPT2_EMBEDDED_SHADERS ${CMAKE_BINARY_DIR}/generated/embedded_shaders.cpp)
add_custom_command(
  OUTPUT ${GPT2_EMBEDDED_SHADERS}
  COMMAND ${CMAKE_COMMAND} -DOUT=${GPT2_EMBEDDED_SHADERS} -DSHADER_DIR=${PROJECT_SOURCE_DIR}/shaders
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_shaders_script.cmake
  DEPENDS ${GPT2_SHADER_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_shaders_script.cmake
  COMMENT "Embedding shaders")
