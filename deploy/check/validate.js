// kubernetes-models: each document of a manifest against the Kubernetes
// API's types and required fields (it accepts fields the API does not
// have: strict.js refuses those).
// usage: node validate.js FILE.yaml
"use strict";
const fs = require("fs");
const yaml = require("js-yaml");

const KINDS = {
  "apps/v1/DaemonSet": () => require("kubernetes-models/apps/v1/DaemonSet").DaemonSet,
  "v1/ConfigMap": () => require("kubernetes-models/v1/ConfigMap").ConfigMap,
  "v1/Service": () => require("kubernetes-models/v1/Service").Service,
};

let failed = 0;
for (const doc of yaml.loadAll(fs.readFileSync(process.argv[2], "utf8"))) {
  if (!doc) continue;
  const kind = `${doc.apiVersion}/${doc.kind}`;
  const Model = KINDS[kind];
  if (!Model) { console.log(`${kind}: no model here`); failed++; continue; }
  try {
    new (Model())(doc).validate();
    console.log(`${kind} ${doc.metadata.name}: valid`);
  } catch (e) {
    console.log(`${kind}: ${e.message}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
