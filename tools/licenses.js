// Writes the licence notice for the bundle: every npm package esbuild put into it, with its licence text.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [metafile, outfile] = process.argv.slice(2);
const meta = JSON.parse(readFileSync(metafile, "utf8"));
const packages = new Set();
for (const input of Object.keys(meta.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}

const sections = [...packages].sort().map((name) => {
  const dir = join("node_modules", name);
  const info = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? readFileSync(join(dir, file), "utf8").trim() : `(no licence file; package.json says ${info.license})`;
  return `${name} ${info.version} (${info.license})\n\n${text}\n`;
});

const header = "static/vendor/codemirror-6.0.2.esm.min.js bundles these npm packages (built by tools/, see tools/README.md):\n";
writeFileSync(outfile, [header, ...sections].join("\n" + "-".repeat(72) + "\n\n"));
console.log(`${packages.size} packages: ${[...packages].sort().join(", ")}`);
