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
  if(Tensile_CPU_THREADS)
    list(APPEND flags "--jobs=${Tensile_CPU_THREADS}")
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
endfunction()
