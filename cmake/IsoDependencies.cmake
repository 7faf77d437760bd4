# Every external package the build uses, found in one place (tools/install-deps.sh installs them).
# Boost.Context (for fibers) and Google Benchmark (for micro-benchmarks) are not here: nothing
# uses them yet, and each comes in with the first code that does.
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
if(ISO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(ISO_BUILD_BENCHMARKS)
  # Peers for side-by-side figures; optional, the benchmarks say when a peer is missing.
  find_package(MPI COMPONENTS CXX QUIET)
endif()
find_package(Protobuf REQUIRED)
