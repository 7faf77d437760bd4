# Every external package the build uses, found in one place (tools/install-deps.sh installs them).
# Google Benchmark (for micro-benchmarks) is not here: nothing uses it yet, and it comes in
# with the first code that does.
find_package(Threads REQUIRED)
# The runtime's fibers (runtime/fibers/) switch stacks with Boost.Context.
find_package(Boost 1.74 REQUIRED COMPONENTS context)
find_package(absl REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
# The bootstrap of jobs that a PMIx launcher (mpirun, srun --mpi=pmix) starts; the package's
# flags carry an rpath to its private prefix.
pkg_check_modules(PMIX REQUIRED IMPORTED_TARGET pmix)
if(ISO_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(ISO_BUILD_BENCHMARKS)
  # Peers for side-by-side figures; optional, the benchmarks say when a peer is missing.
  find_package(MPI COMPONENTS CXX QUIET)
endif()
find_package(Protobuf REQUIRED)
# The ucx transport (comm/ucx/) is built only where UCX is installed.
find_package(ucx QUIET)
set(ISO_HAVE_UCX ${ucx_FOUND})
