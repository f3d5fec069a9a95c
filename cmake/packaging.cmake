# What `cmake --install build --prefix P` puts where, and the Debian package CPack makes of
# it (`cmake --build build --target package`: build/chaosbench_<version>_<arch>.deb,
# README "Installing on every host of a cluster"; tests/e2e/package_test.sh checks both).
#   P/bin/chaosbench
#   P/lib/libchaosbench_cuda.so, P/lib/libchaosbench_cuda_workers.so (when built): what the
#     binary loads at run time and finds as <its directory>/../lib/NAME
#     (common/files/install_layout.h). So they go to lib/ itself, not to GNUInstallDirs' LIBDIR,
#     which under /usr on Debian is lib/x86_64-linux-gnu; they are private modules with no
#     soname, never linked against.
#   P/share/doc/chaosbench/: README.md and docs/ (README's links stay good)
#   P/share/chaosbench/scenarios/: the scenarios and their examples ({scenario_dir} makes
#     a command scenario's paths follow the file wherever it is)
include(GNUInstallDirs)
if(NOT CMAKE_INSTALL_BINDIR STREQUAL "bin")
  message(FATAL_ERROR "CMAKE_INSTALL_BINDIR must be bin: the binary finds its modules in ../lib beside it")
endif()

install(TARGETS chaosbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(module chaosbench_cuda chaosbench_cuda_workers)
  if(TARGET ${module})
    install(TARGETS ${module} LIBRARY DESTINATION lib)
  endif()
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/chaosbench/scenarios)

# The package: one binary package, installed under /usr. Depends is what dpkg-shlibdeps
# finds for every library the binary links (Debian packages only: the CUDA layer's module
# links libcudart and libnccl, which no Debian package provides, so dpkg-shlibdeps passes
# over them, --ignore-missing-info, and the module loads them only where they are), plus
# the programs chaosbench runs: tc (iproute2), iptables and iptables-restore (iptables),
# and the system OpenSSH client that cluster.mode "ssh" starts agents through.
# Recommends: what only the self-benchmarks run (sysctl from procps, iperf3).
# Building it needs dpkg-dev (dpkg-shlibdeps) and file (scripts/bootstrap.sh).
set(CHAOSBENCH_PACKAGE_MAINTAINER "chaosbench maintainers <maintainers@users.noreply.a-seed-da48ecee.example>"
    CACHE STRING "The Debian package's Maintainer field")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME chaosbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "chaos engineering and benchmarking for distributed AI training and inference")
# The extended description; CPack puts the summary above it as the synopsis line.
set(CPACK_PACKAGE_DESCRIPTION [[
One command brings up a cluster, runs a distributed workload on it, injects faults
on a timeline (network, node, GPU and collective faults), measures what they do
before, during and after each fault, checks the numbers against limits and writes
the results (JSON, HTML, Markdown, JUnit, Chrome trace).

GPU workloads use the CUDA runtime, cuBLAS and NCCL where they are installed.
Without them everything else works.]])
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CHAOSBENCH_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iproute2, iptables, openssh-client")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "iperf3, procps")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR})
include(CPack)
