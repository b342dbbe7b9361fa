// Refuses a field the API does not have: each document becomes a
// TypeScript object literal typed with kubernetes-models' interface for
// its kind, and tsc's excess-property check refuses any key, at any depth,
// that the interface does not declare (a misspelled "readinessprobe",
// "hostNetwrok"); wrong types and missing required fields too.
// usage: node strict.js FILE.yaml
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const yaml = require("js-yaml");
const ts = require("typescript");

const TYPES = {
  "apps/v1/DaemonSet": ["IDaemonSet", "kubernetes-models/apps/v1/DaemonSet"],
  "v1/ConfigMap": ["IConfigMap", "kubernetes-models/v1/ConfigMap"],
  "v1/Service": ["IService", "kubernetes-models/v1/Service"],
};

const file = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bt-strict-"));
const src = path.join(dir, "manifest.ts");
let text = "", n = 0;
for (const doc of yaml.loadAll(fs.readFileSync(file, "utf8"))) {
  if (!doc) continue;
  const t = TYPES[`${doc.apiVersion}/${doc.kind}`];
  if (!t) { console.log(`${doc.apiVersion}/${doc.kind}: no type here`); process.exit(1); }
  text += `import type { ${t[0]} as T${n} } from ${JSON.stringify(t[1])};\n`;
  text += `export const doc${n}: T${n} = ${JSON.stringify(doc, null, 1)};\n`;
  n++;
}
fs.writeFileSync(src, text);
const program = ts.createProgram([src], {
  noEmit: true, strict: true, skipLibCheck: true, types: [],
  moduleResolution: ts.ModuleResolutionKind.Node10, module: ts.ModuleKind.CommonJS,
  baseUrl: __dirname, paths: { "*": [path.join(__dirname, "node_modules", "*")] },
});
const diags = ts.getPreEmitDiagnostics(program);
for (const d of diags) {
  const msg = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  const where = d.file ? d.file.getLineAndCharacterOfPosition(d.start) : null;
  // the line of the generated literal names the key
  const line = where ? text.split("\n")[where.line].trim() : "";
  console.log(`${path.basename(file)}: ${msg.split("\n")[0]}${line ? `  [${line}]` : ""}`);
}
fs.rmSync(dir, { recursive: true });
if (!diags.length) console.log(`${path.basename(file)}: ${n} documents, no field the API lacks`);
process.exit(diags.length ? 1 : 0);
