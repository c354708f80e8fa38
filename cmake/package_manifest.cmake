# Writes the npm package's manifest (cmake -DSOURCE=web/module/package.json -DOUT=... -DREPOSITORY=owner/name
# -P package_manifest.cmake): the source manifest, plus repository, homepage (the demo on GitHub Pages)
# and bugs when the GitHub repository is known. A clone without a GitHub remote builds a package
# without them rather than with a guessed owner.
file(READ ${SOURCE} manifest)
if(REPOSITORY)
  if(NOT REPOSITORY MATCHES "^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$")
    message(FATAL_ERROR "GPT2_REPOSITORY: ${REPOSITORY} is not owner/name")
  endif()
  set(owner ${CMAKE_MATCH_1})
  set(name ${CMAKE_MATCH_2})
  string(TOLOWER ${owner} host)
  set(pages "https://${host}.github.io/${name}/")
  string(TOLOWER ${name} lower_name)
  if(lower_name STREQUAL "${host}.github.io")
    set(pages "https://${host}.github.io/")
  endif()
  # Inserted as text: a JSON rewrite would sort the keys, and the order of "exports" conditions counts.
  set(anchor "  \"license\": \"MIT\",\n")
  string(FIND "${manifest}" "${anchor}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SOURCE}: no line '\"license\": \"MIT\",' to put the repository fields after")
  endif()
  string(REPLACE "${anchor}" "${anchor}  \"repository\": { \"type\": \"git\", \"url\": \"git+https://github.com/${REPOSITORY}.git\" },
  \"homepage\": \"${pages}\",
  \"bugs\": \"https://github.com/${REPOSITORY}/issues\",
" manifest "${manifest}")
endif()
file(WRITE ${OUT} "${manifest}")
