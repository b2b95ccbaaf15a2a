// ort_bench.js — times ONNX Runtime (CPU) on one model and one .npy input.
//   node ort_bench.js MODEL.onnx INPUT.npy [iterations] [warmup] [threads]
// Prints one JSON line: {"min_ms":..,"median_ms":..,"max_ms":..}.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// Minimal .npy reader: float32, C order, little-endian (what bench feeds).
function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(path + ': not .npy');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', off, off + hlen);
  if (!/'descr': '<f4'/.test(header) || /'fortran_order': True/.test(header))
    throw new Error(path + ': expected little-endian float32 C order');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const start = off + hlen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return {shape, data};
}

async function main() {
  const [model, input, itArg, wuArg, thArg] = process.argv.slice(2);
  const iterations = Number(itArg || 200), warmup = Number(wuArg || 20);
  const threads = Number(thArg || 2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all'});
  const x = readNpy(input);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({min_ms: times[0], median_ms: times[times.length >> 1],
                              max_ms: times[times.length - 1]}));
}
main().catch((e) => { console.error('error: ort_bench: ' + e.message); process.exit(1); });
