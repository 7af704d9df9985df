# CMake toolchain for linux/arm64 cross-compiled with Debian's cross
# toolchain (g++-aarch64-linux-gnu) against the :arm64 -dev packages that
# dpkg multiarch installs under /usr/lib/aarch64-linux-gnu (the Dockerfile's
# builder stage does both when TARGETARCH is arm64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# find_package and find_library: the target's multiarch folders only;
# programs (cmake's own helpers) from the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (cpp-httplib, jemalloc): the target's .pc files, not the build
# machine's (there are none of these here, but a stray one must not win).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
