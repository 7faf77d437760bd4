# `cmake --install` produces a package: find_package(iso) then link iso::iso.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ISO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/iso)

# The layer libraries are static; a static library's private dependencies still reach the
# final link, so all of them are exported (consumers see only iso::iso).
install(TARGETS iso iso_runtime iso_nicfw iso_nicfw_topology iso_comm iso_base
        EXPORT iso-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The ucx transport exists only where UCX was found; consumers then need UCX too.
set(ISO_PACKAGE_NEEDS_UCX OFF)
if(TARGET iso_comm_ucx)
  set(ISO_PACKAGE_NEEDS_UCX ON)
  install(TARGETS iso_comm_ucx EXPORT iso-targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/iso DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/iso/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iso)
# The IDL compiler: the plugin, iso/options.proto beside the headers, and iso_generate().
install(TARGETS protoc-gen-iso EXPORT iso-targets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/compiler-support/iso/options.proto
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iso)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/IsoGenerate.cmake DESTINATION ${ISO_INSTALL_CMAKEDIR})
install(EXPORT iso-targets NAMESPACE iso:: DESTINATION ${ISO_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/isoConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/isoConfig.cmake
                              INSTALL_DESTINATION ${ISO_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/isoConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/isoConfig.cmake ${PROJECT_BINARY_DIR}/isoConfigVersion.cmake
        DESTINATION ${ISO_INSTALL_CMAKEDIR})
