# Install rules and packages (docs/embedding.md): what `cmake --install`
# puts under a prefix for apps that embed dmlc.
#
#   lib/libdmlc_runtime.so.<major> + .a   the runtime (base, cpu, runtime,
#                                         trainer, serving layer)
#   lib/libdmlc_compiler.so.<major> + .a  ir, passes, frontends, codegen and
#                                         the compile driver (not in
#                                         DMLC_RUNTIME_ONLY builds)
#   include/dmlc/*.h                      the public headers (flat: their
#                                         quoted includes resolve there)
#   bin/dmlc, lib/pkgconfig/dmlc-runtime.pc + dmlc.pc,
#   lib/cmake/dmlc/ (find_package(dmlc): dmlc::runtime, dmlc::compiler and
#   the static dmlc::runtime_static, dmlc::compiler_static)
#
# The combined libraries are made of the objects of the in-tree static
# libraries (which the tests keep linking), compiled position-independent.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_dmlc_rt_parts dml_base dml_cpu dml_runtime dml_train_rt dml_serve)
set(_dmlc_cc_parts dml_ir dml_onnx dml_onnx_proto dml_layers dml_passes dml_codegen dml_driver
                   dml_train_cli dml_quantize)

# Collects the objects of the parts that exist in this build.
function(_dmlc_objects out)
  set(objs "")
  foreach(t ${ARGN})
    if(TARGET ${t})
      set_target_properties(${t} PROPERTIES POSITION_INDEPENDENT_CODE ON)
      # -fPIC alone would make every global function interposable, which
      # stops GCC inlining them within their file: keep -fPIE's codegen.
      if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${t} PRIVATE -fno-semantic-interposition)
      endif()
      list(APPEND objs $<TARGET_OBJECTS:${t}>)
    endif()
  endforeach()
  set(${out} ${objs} PARENT_SCOPE)
endfunction()

# The libraries the static archives need after them: one list, used by the
# CMake package's static targets and the .pc files' Libs.private.
set(DMLC_RUNTIME_PRIVATE_LIBS m pthread)
# (zlib and protobuf-c also as Requires.private in dmlc.pc)
set(DMLC_COMPILER_PRIVATE_LIBS z protobuf-c)
if(TARGET dml_codegen)
  # glslang's static libraries in the order its CMake package links them
  # (glslang-targets.cmake); those a glslang version lacks are left out.
  foreach(lib SPIRV glslang-default-resource-limits glslang MachineIndependent GenericCodeGen
              OGLCompiler OSDependent SPIRV-Tools-opt SPIRV-Tools-link SPIRV-Tools)
    find_library(DMLC_LIB_${lib} ${lib})
    if(DMLC_LIB_${lib})
      list(APPEND DMLC_COMPILER_PRIVATE_LIBS ${lib})
    endif()
  endforeach()
  list(APPEND DMLC_COMPILER_PRIVATE_LIBS spirv-cross-c-shared stdc++)
endif()
list(APPEND DMLC_COMPILER_PRIVATE_LIBS m pthread)

set(_dmlc_hdr_dirs ${PROJECT_SOURCE_DIR}/runtime ${PROJECT_SOURCE_DIR}/runtime/base
                   ${PROJECT_SOURCE_DIR}/runtime/train ${PROJECT_SOURCE_DIR}/runtime/serve)
set(_dmlc_install_targets "")

_dmlc_objects(_rt_objs ${_dmlc_rt_parts})
add_library(dmlc_runtime SHARED ${_rt_objs})
add_library(dmlc_runtime_static STATIC ${_rt_objs})
set_target_properties(dmlc_runtime PROPERTIES VERSION ${PROJECT_VERSION}
                                              SOVERSION ${PROJECT_VERSION_MAJOR})
set_target_properties(dmlc_runtime_static PROPERTIES OUTPUT_NAME dmlc_runtime)
target_link_libraries(dmlc_runtime PRIVATE ${DMLC_RUNTIME_PRIVATE_LIBS})
target_link_libraries(dmlc_runtime_static INTERFACE ${DMLC_RUNTIME_PRIVATE_LIBS})
foreach(t dmlc_runtime dmlc_runtime_static)
  target_include_directories(${t} INTERFACE "$<BUILD_INTERFACE:${_dmlc_hdr_dirs}>"
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/dmlc>)
endforeach()
set_target_properties(dmlc_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(dmlc_runtime_static PROPERTIES EXPORT_NAME runtime_static)
list(APPEND _dmlc_install_targets dmlc_runtime dmlc_runtime_static)
set(_dmlc_headers runtime/dml_rt.h runtime/dml_tensor.h runtime/base/dml_dtype.h runtime/base/dml_status.h
                  runtime/base/dml_types.h runtime/train/dml_trainer.h
                  runtime/train/dml_safetensors.h runtime/train/dml_metrics.h
                  runtime/serve/dml_serve.h runtime/base/dml_npy.h)

if(NOT DMLC_RUNTIME_ONLY AND TARGET dml_driver)
  _dmlc_objects(_cc_objs ${_dmlc_cc_parts})
  set(_cc_hdr_dirs ${PROJECT_SOURCE_DIR}/ir ${PROJECT_SOURCE_DIR}/frontends/onnx
                   ${PROJECT_SOURCE_DIR}/frontends/layers ${PROJECT_SOURCE_DIR}/compiler
                   ${PROJECT_SOURCE_DIR}/passes)
  add_library(dmlc_compiler SHARED ${_cc_objs})
  add_library(dmlc_compiler_static STATIC ${_cc_objs})
  set_target_properties(dmlc_compiler PROPERTIES VERSION ${PROJECT_VERSION}
                                                 SOVERSION ${PROJECT_VERSION_MAJOR}
                                                 EXPORT_NAME compiler)
  set_target_properties(dmlc_compiler_static PROPERTIES OUTPUT_NAME dmlc_compiler
                                                        EXPORT_NAME compiler_static)
  target_link_libraries(dmlc_compiler PUBLIC dmlc_runtime PRIVATE ${DMLC_COMPILER_PRIVATE_LIBS})
  # glslang's and SPIRV-Tools' static archives stay inside: their symbols
  # are not exported (an app may link another glslang).
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux" OR ANDROID)
    target_link_options(dmlc_compiler PRIVATE -Wl,--exclude-libs,ALL)
  endif()
  target_link_libraries(dmlc_compiler_static INTERFACE dmlc_runtime_static
                                                       ${DMLC_COMPILER_PRIVATE_LIBS})
  foreach(t dmlc_compiler dmlc_compiler_static)
    target_include_directories(${t} INTERFACE "$<BUILD_INTERFACE:${_cc_hdr_dirs}>")
  endforeach()
  list(APPEND _dmlc_install_targets dmlc_compiler dmlc_compiler_static)
  list(APPEND _dmlc_headers runtime/base/dml_ops.h runtime/base/ops.def ir/dml_ir.h
       frontends/onnx/dml_onnx.h frontends/layers/dml_layers.h compiler/dml_driver.h
       compiler/dml_dim_spec.h compiler/dml_onnx_export.h passes/dml_train.h)
  if(TARGET dml_quantize)
    list(APPEND _dmlc_headers compiler/dml_quantize.h)
  endif()
  set(DMLC_HAVE_COMPILER_LIB ON)
else()
  set(DMLC_HAVE_COMPILER_LIB OFF)
endif()

list(TRANSFORM _dmlc_headers PREPEND ${PROJECT_SOURCE_DIR}/)
install(FILES ${_dmlc_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dmlc)
install(TARGETS ${_dmlc_install_targets} EXPORT dmlcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET dmlc)
  install(TARGETS dmlc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# CMake package: find_package(dmlc [0.1]) -> dmlc::runtime, dmlc::compiler.
set(_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/dmlc)
install(EXPORT dmlcTargets NAMESPACE dmlc:: DESTINATION ${_cmakedir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dmlcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/dmlcConfig.cmake
                              INSTALL_DESTINATION ${_cmakedir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dmlcConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dmlcConfig.cmake ${PROJECT_BINARY_DIR}/dmlcConfigVersion.cmake
        DESTINATION ${_cmakedir})

# pkg-config: prefix from the .pc file's own place, so the tree relocates.
file(RELATIVE_PATH DMLC_PC_PREFIX_REL /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" DMLC_PC_PREFIX_REL "${DMLC_PC_PREFIX_REL}")
list(TRANSFORM DMLC_RUNTIME_PRIVATE_LIBS PREPEND -l OUTPUT_VARIABLE _rt_priv)
list(JOIN _rt_priv " " DMLC_PC_RUNTIME_LIBS_PRIVATE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/dmlc-runtime.pc.in
               ${PROJECT_BINARY_DIR}/pkgconfig/dmlc-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/dmlc-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(DMLC_HAVE_COMPILER_LIB)
  set(_cc_priv ${DMLC_COMPILER_PRIVATE_LIBS})
  list(REMOVE_ITEM _cc_priv z protobuf-c)
  list(TRANSFORM _cc_priv PREPEND -l)
  list(JOIN _cc_priv " " DMLC_PC_COMPILER_LIBS_PRIVATE)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/dmlc.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/dmlc.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/dmlc.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# The install tree in use: examples/ built out of the tree against it
# (tests/install/test_install.sh). Not in sanitizer builds, whose objects
# need the sanitizer runtimes an app would not link.
if(DMLC_HAVE_COMPILER_LIB AND NOT DMLC_SANITIZE AND NOT DMLC_FUZZ)
  find_program(DMLC_PKG_CONFIG pkg-config)
  if(DMLC_PKG_CONFIG AND EXISTS /usr/share/datasets/fashion-mnist)
    add_test(NAME install_embed
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/test_install.sh ${PROJECT_BINARY_DIR})
    set_tests_properties(install_embed PROPERTIES LABELS install TIMEOUT 300)
  endif()
endif()
