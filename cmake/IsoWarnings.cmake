# One list of warning flags for every target of the project; CI adds -Werror.
add_library(iso_warnings INTERFACE)
target_compile_options(iso_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                              -Wnon-virtual-dtor -Wcast-align -Wnull-dereference)
if(ISO_WERROR)
  target_compile_options(iso_warnings INTERFACE -Werror)
endif()

if(ISO_SANITIZE)
  list(JOIN ISO_SANITIZE "," _iso_sanitizers)
  add_compile_options(-fsanitize=${_iso_sanitizers} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${_iso_sanitizers})
  if("undefined" IN_LIST ISO_SANITIZE)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
