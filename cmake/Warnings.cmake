# SPDX-License-Identifier: GPL-2.0-or-later
# Warning flags for our own targets only (never forced on consumers).
add_library(fabricplace_warnings INTERFACE)
target_compile_options(
  fabricplace_warnings
  INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
            -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
            -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
option(FABRICPLACE_WARNINGS_AS_ERRORS "Treat warnings as errors" OFF)
if(FABRICPLACE_WARNINGS_AS_ERRORS)
  target_compile_options(fabricplace_warnings INTERFACE -Werror)
endif()
