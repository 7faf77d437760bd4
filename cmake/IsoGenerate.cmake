# iso_generate(<target> FILES <a.proto>... [IMPORT_DIRS <dir>...])
#
# Runs protoc with protoc-gen-iso on each .proto file and adds the generated sources to
# <target>: for dir/a.proto, dir/a.iso.hpp and dir/a.iso.cpp, included as "dir/a.iso.hpp".
# A file is named, as protoc sees it, relative to the first of IMPORT_DIRS, then
# CMAKE_CURRENT_SOURCE_DIR, that holds it; "iso/options.proto" is always importable. The
# target gets the generated headers' folder on its include path and links iso::iso (PUBLIC;
# use the keyword form of target_link_libraries with it). The code is generated again when a
# listed .proto or the plugin changes.
#
#   find_package(iso REQUIRED)
#   add_executable(app main.cpp)
#   iso_generate(app FILES counter.proto)
#
# Written for Debian's protobuf 3.21 and CMake 3.25: protobuf_generate() neither reruns
# when its plugin is rebuilt nor puts our import root first, so the command is spelled out.
function(iso_generate target)
  cmake_parse_arguments(ARG "" "" "FILES;IMPORT_DIRS" ${ARGN})
  if(NOT ARG_FILES)
    message(FATAL_ERROR "iso_generate(${target}): no FILES given")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "iso_generate(${target}): no target named ${target}")
  endif()
  if(NOT ISO_IDL_IMPORT_DIR)
    message(FATAL_ERROR "iso_generate(${target}): ISO_IDL_IMPORT_DIR (where iso/options.proto "
                        "lies) is not set; use find_package(iso)")
  endif()
  # In the iso build itself the plugin is a target of the same build; in a package, imported.
  if(TARGET protoc-gen-iso)
    set(plugin protoc-gen-iso)
  else()
    set(plugin iso::protoc-gen-iso)
  endif()

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/iso_generated/${target})
  set(roots ${ARG_IMPORT_DIRS} ${CMAKE_CURRENT_SOURCE_DIR})
  set(import_args)
  foreach(dir IN LISTS roots ISO_IDL_IMPORT_DIR)
    get_filename_component(dir ${dir} ABSOLUTE)
    list(APPEND import_args -I ${dir})
  endforeach()
  set(protos)
  foreach(proto IN LISTS ARG_FILES)
    get_filename_component(abs ${proto} ABSOLUTE)
    list(APPEND protos ${abs})
  endforeach()

  foreach(abs IN LISTS protos)
    set(rel "")
    foreach(dir IN LISTS roots)
      get_filename_component(dir ${dir} ABSOLUTE)
      file(RELATIVE_PATH candidate ${dir} ${abs})
      if(NOT candidate MATCHES "^\\.\\./")
        set(rel ${candidate})
        break()
      endif()
    endforeach()
    if(rel STREQUAL "")
      message(FATAL_ERROR "iso_generate(${target}): ${abs} is in none of ${roots}")
    endif()
    string(REGEX REPLACE "\\.proto$" "" stem ${rel})
    set(outputs ${out_dir}/${stem}.iso.hpp ${out_dir}/${stem}.iso.cpp)
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND protobuf::protoc --plugin=protoc-gen-iso=$<TARGET_FILE:${plugin}>
              --iso_out=${out_dir} ${import_args} ${abs}
      DEPENDS ${protos} ${plugin} $<TARGET_FILE:${plugin}> protobuf::protoc
              ${ISO_IDL_IMPORT_DIR}/iso/options.proto
      COMMENT "Running protoc-gen-iso on ${rel}"
      VERBATIM)
    target_sources(${target} PRIVATE ${outputs})
  endforeach()
  target_include_directories(${target} PUBLIC ${out_dir})
  target_link_libraries(${target} PUBLIC iso::iso absl::status absl::strings)
endfunction()
