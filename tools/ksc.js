// Compile a Kaitai Struct spec with the pinned npm kaitai-struct-compiler.
// Reads {"target": "...", "ksy": {...parsed YAML...}} as JSON on stdin and
// writes {"files": {name: source}} as JSON on stdout. Driven by build.py.
"use strict";
const compiler = require("kaitai-struct-compiler");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const request = JSON.parse(input);
  compiler
    .compile(request.target, request.ksy, null, false)
    .then((files) => {
      process.stdout.write(JSON.stringify({ version: compiler.version, files }));
    })
    .catch((err) => {
      process.stderr.write(`kaitai-struct-compiler ${compiler.version}: ${err && err.stack ? err.stack : err}\n`);
      process.exit(1);
    });
});
