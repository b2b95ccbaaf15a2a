# Synthetic ONNX models for the GPU benchmarks (Debian's python3-onnx):
# a 4096^3 f32 MatMul with both operands as inputs (no weights to carry) and
# a chain of five elementwise ops on 2^26 floats that the scheduler fuses
# into one kernel.  Usage: /usr/bin/python3 bench/gpu/make_models.py OUTDIR
import sys
import onnx
from onnx import helper, TensorProto

out = sys.argv[1]
f = TensorProto.FLOAT
g = helper.make_graph([helper.make_node('MatMul', ['A', 'B'], ['C'])], 'gemm',
                      [helper.make_tensor_value_info('A', f, [4096, 4096]),
                       helper.make_tensor_value_info('B', f, [4096, 4096])],
                      [helper.make_tensor_value_info('C', f, [4096, 4096])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          out + '/gemm4096.onnx')
n = 1 << 26
nodes = [helper.make_node('Mul', ['x', 'x'], ['t0']), helper.make_node('Add', ['t0', 'x'], ['t1']),
         helper.make_node('Relu', ['t1'], ['t2']), helper.make_node('Mul', ['t2', 'h'], ['t3']),
         helper.make_node('Sub', ['t3', 'one'], ['y'])]
g = helper.make_graph(nodes, 'ew', [helper.make_tensor_value_info('x', f, [n])],
                      [helper.make_tensor_value_info('y', f, [n])],
                      [helper.make_tensor('h', f, [], [0.5]), helper.make_tensor('one', f, [], [1.0])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          out + '/elementwise64m.onnx')
