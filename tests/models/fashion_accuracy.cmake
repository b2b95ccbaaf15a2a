# Compiles examples/fashion_mlp.onnx and checks the Fashion-MNIST test accuracy.
execute_process(COMMAND ${DMLC} compile ${MODEL} -o ${WORK}/fashion_acc.dmlpkg
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compile failed: ${out}${err}")
endif()
execute_process(COMMAND ${CLASSIFY} ${WORK}/fashion_acc.dmlpkg
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "8695 correct, accuracy 86.95%")
  message(FATAL_ERROR "expected 8695/10000 correct (86.95%)")
endif()
