# tensile-lite's CMake package: provides TensileCreateLibraryFiles() with the signature hipBLASLt calls,
# running tensile-lite's TensileCreateLibrary instead of upstream's.
#
# Find it with: cmake -DCMAKE_PREFIX_PATH="$(tensile-lite cmake-prefix)" ...
# Override the command with -DTENSILE_LITE_TCL=/path/to/TensileCreateLibrary.

include(CMakeParseArguments)

if(NOT TENSILE_LITE_TCL)
  find_program(TENSILE_LITE_TCL NAMES TensileCreateLibrary)
endif()
if(NOT TENSILE_LITE_TCL)
  message(FATAL_ERROR "tensile-lite: the TensileCreateLibrary command was not found; install tensile-lite "
                      "(pip install tensile-lite) or pass -DTENSILE_LITE_TCL=<path>")
endif()
set(Tensile_FOUND TRUE)

# TensileHost, the C++ runtime library hipBLASLt links (library/CMakeLists.txt) and configures
# (rocblaslt/src/CMakeLists.txt), is not ours to write: its sources ship with hipBLASLt in
# tensilelite/Tensile/Source. Built from there, as upstream's package does, when that folder is given
# as TENSILE_LITE_HOST_SOURCE or found in the consuming source tree; otherwise no TensileHost is defined.
set(TENSILE_LITE_HOST_SOURCE "" CACHE PATH
    "Tensile C++ host sources (hipBLASLt's tensilelite/Tensile/Source) to build the TensileHost target from")
set(_tensile_lite_host "${TENSILE_LITE_HOST_SOURCE}")
if(NOT _tensile_lite_host AND EXISTS "${CMAKE_SOURCE_DIR}/tensilelite/Tensile/Source/CMakeLists.txt")
  set(_tensile_lite_host "${CMAKE_SOURCE_DIR}/tensilelite/Tensile/Source")
endif()
if(_tensile_lite_host AND NOT TARGET TensileHost)
  if(NOT EXISTS "${_tensile_lite_host}/CMakeLists.txt")
    message(FATAL_ERROR "tensile-lite: TENSILE_LITE_HOST_SOURCE=${_tensile_lite_host} has no CMakeLists.txt; "
                        "give hipBLASLt's tensilelite/Tensile/Source folder")
  endif()
  # The switches those sources read, from the components asked for (find_package(Tensile ... HIP LLVM)).
  foreach(_component HIP LLVM)
    if("${_component}" IN_LIST Tensile_FIND_COMPONENTS)
      set(TENSILE_USE_${_component} ON CACHE BOOL "Tensile host: use ${_component}")
    else()
      set(TENSILE_USE_${_component} OFF CACHE BOOL "Tensile host: use ${_component}")
    endif()
  endforeach()
  if("Client" IN_LIST Tensile_FIND_COMPONENTS AND TENSILE_USE_HIP AND TENSILE_USE_LLVM)
    set(TENSILE_BUILD_CLIENT ON CACHE BOOL "Tensile host: build the client")
  else()
    set(TENSILE_BUILD_CLIENT OFF CACHE BOOL "Tensile host: build the client")
  endif()
  if("STATIC_ONLY" IN_LIST Tensile_FIND_COMPONENTS)
    set(TENSILE_STATIC_ONLY ON CACHE BOOL "Tensile host: export no symbols from a shared library")
  else()
    set(TENSILE_STATIC_ONLY OFF CACHE BOOL "Tensile host: export no symbols from a shared library")
  endif()
  list(APPEND CMAKE_MODULE_PATH "${_tensile_lite_host}/cmake" "${_tensile_lite_host}")
  message(STATUS "tensile-lite: building TensileHost from ${_tensile_lite_host}")
  add_subdirectory("${_tensile_lite_host}" "Tensile")
elseif(NOT TARGET TensileHost)
  message(STATUS "tensile-lite: no TensileHost target (set TENSILE_LITE_HOST_SOURCE to hipBLASLt's "
                 "tensilelite/Tensile/Source if the project links it)")
endif()

# Output target: ${Tensile_VAR_PREFIX}_LIBRARY_TARGET (default TENSILE_LIBRARY_TARGET), which builds
# <Tensile_OUTPUT_PATH>/library with TensileManifest.txt as its stamp.
function(TensileCreateLibraryFiles Tensile_LOGIC_PATH Tensile_OUTPUT_PATH)
  set(options MERGE_FILES NO_MERGE_FILES SHORT_FILE_NAMES PRINT_DEBUG GENERATE_PACKAGE SEPARATE_ARCHITECTURES
              LAZY_LIBRARY_LOADING KEEP_BUILD_TMP)
  set(oneValueArgs CODE_OBJECT_VERSION COMPILER COMPILER_PATH EMBED_KEY EMBED_LIBRARY LIBRARY_FORMAT
                   TENSILE_ROOT VAR_PREFIX CPU_THREADS)
  set(multiValueArgs ARCHITECTURE)
  cmake_parse_arguments(Tensile "${options}" "${oneValueArgs}" "${multiValueArgs}" ${ARGN})
  if(Tensile_UNPARSED_ARGUMENTS)
    message(WARNING "TensileCreateLibraryFiles: unrecognized arguments: ${Tensile_UNPARSED_ARGUMENTS}")
  endif()
  if(Tensile_EMBED_LIBRARY OR Tensile_EMBED_KEY)
    # Upstream would write <output>/library/<name>.cpp and add a library from it; we write no sources.
    message(FATAL_ERROR "TensileCreateLibraryFiles: EMBED_LIBRARY/EMBED_KEY (a library embedded in C++ "
                        "source) is not supported by tensile-lite; hipBLASLt does not use it")
  endif()

  # The same flags, in the same order, as upstream's function passes.
  set(flags)
  if(Tensile_MERGE_FILES AND NOT Tensile_NO_MERGE_FILES)
    list(APPEND flags "--merge-files")
  else()
    list(APPEND flags "--no-merge-files")
  endif()
  if(Tensile_SEPARATE_ARCHITECTURES)
    list(APPEND flags "--separate-architectures")
  endif()
  if(Tensile_LAZY_LIBRARY_LOADING)
    list(APPEND flags "--lazy-library-loading")
  endif()
  if(Tensile_ENABLE_MARKER)
    list(APPEND flags "--enable-marker")
  endif()
  if(Tensile_KEEP_BUILD_TMP)
    list(APPEND flags "--keep-build-tmp")
  endif()
  if(Tensile_GENERATE_PACKAGE)
    list(APPEND flags "--package-library")
  endif()
  if(Tensile_SHORT_FILE_NAMES)
    list(APPEND flags "--short-file-names")
  else()
    list(APPEND flags "--no-short-file-names")
  endif()
  if(Tensile_PRINT_DEBUG)
    list(APPEND flags "--library-print-debug")
  else()
    list(APPEND flags "--no-library-print-debug")
  endif()
  if(Tensile_CODE_OBJECT_VERSION)
    list(APPEND flags "--code-object-version=${Tensile_CODE_OBJECT_VERSION}")
  endif()
  if(Tensile_COMPILER)
    list(APPEND flags "--cxx-compiler=${Tensile_COMPILER}")
  endif()
  if(Tensile_COMPILER_PATH)
    list(APPEND flags "--cmake-cxx-compiler=${Tensile_COMPILER_PATH}")
  endif()
  if(Tensile_CPU_THREADS)
    list(APPEND flags "--jobs=${Tensile_CPU_THREADS}")
  endif()
  if(Tensile_ASM_DEBUG)
    list(APPEND flags "--asm-debug")
  endif()
  if(Tensile_LOGIC_FILTER)
    list(APPEND flags "--logic-filter=${Tensile_LOGIC_FILTER}")
  endif()
  if(Tensile_LIBRARY_FORMAT)
    list(APPEND flags "--library-format=${Tensile_LIBRARY_FORMAT}")
  endif()
  if(Tensile_ARCHITECTURE)
    # '_' instead of ';' so the list survives as one argument; TensileCreateLibrary splits on either.
    string(REPLACE ";" "_" arch_string "${Tensile_ARCHITECTURE}")
    list(APPEND flags "--architecture=${arch_string}")
  endif()
  if(Tensile_BUILD_ID)
    list(APPEND flags "--build-id=${Tensile_BUILD_ID}")
  endif()

  if(NOT Tensile_VAR_PREFIX)
    set(Tensile_VAR_PREFIX TENSILE)
  endif()
  set(manifest "${Tensile_OUTPUT_PATH}/library/TensileManifest.txt")
  set(Tensile_MANIFEST_FILE_PATH "${manifest}" PARENT_SCOPE)

  if(DEFINED ENV{TENSILE_SKIP_LIBRARY} AND "$ENV{TENSILE_SKIP_LIBRARY}")
    message(STATUS "tensile-lite: skipping the build of ${Tensile_OUTPUT_PATH} (TENSILE_SKIP_LIBRARY)")
    return()
  endif()

  message(STATUS "tensile-lite: ${TENSILE_LITE_TCL} ${flags} ${Tensile_LOGIC_PATH} ${Tensile_OUTPUT_PATH} HIP")
  add_custom_command(
    OUTPUT "${manifest}"
    COMMAND "${TENSILE_LITE_TCL}" ${flags} "${Tensile_LOGIC_PATH}" "${Tensile_OUTPUT_PATH}" HIP
    COMMENT "Generating Tensile libraries with tensile-lite"
    VERBATIM
  )
  add_custom_target("${Tensile_VAR_PREFIX}_LIBRARY_TARGET" ALL DEPENDS "${manifest}")
  if(TARGET TensileHost AND Tensile_LIBRARY_FORMAT MATCHES "yaml")
    target_compile_definitions(TensileHost PUBLIC TENSILE_YAML=1)  # the host reads .yaml libraries
  endif()
endfunction()

# hipBLASLt calls this right after TensileCreateLibraryFiles for its ExtOp kernels (softmax, layernorm,
# amax: hipblasltExtOpLibrary.dat and extop_<gfx>.co), which upstream makes with separate generator
# scripts. tensile-lite does not generate them yet. The runtime opens that library only when an ExtOp API
# is called, so a build without it is possible, but only when asked for.
function(TensileCreateExtOpLibraries OutputFolder ArchStr)
  if(NOT TENSILE_LITE_SKIP_EXTOP_LIBRARIES)
    message(FATAL_ERROR "TensileCreateExtOpLibraries: tensile-lite does not generate hipBLASLt's ExtOp "
                        "libraries (hipblasltExtOpLibrary.dat, extop_<gfx>.co) yet. Configure with "
                        "-DTENSILE_LITE_SKIP_EXTOP_LIBRARIES=ON to build without them: the ExtOp APIs "
                        "(softmax, layernorm, amax) will then fail at run time.")
  endif()
  message(WARNING "tensile-lite: not building the ExtOp libraries for ${ArchStr} into ${OutputFolder} "
                  "(TENSILE_LITE_SKIP_EXTOP_LIBRARIES); hipBLASLt's ExtOp APIs will fail at run time")
  if(NOT TARGET build_ext_op_library)
    add_custom_target(build_ext_op_library)  # upstream's target name, so dependents still resolve
  endif()
endfunction()
