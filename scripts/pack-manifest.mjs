// Keeps the `prepare` script out of the package.json that `npm pack` and `npm publish` put in the tarball, and puts
// it back afterwards. `prepare` builds dist/ where npm runs it: `npm ci` in a checkout, and a git dependency
// (`npm install github:…`), whose clone npm builds with `prepare` only. A tarball already holds dist/, and npm never
// runs a dependency's `prepare` from one, yet npm 11 lists it among the install scripts it warns every installer of a
// tarball about. `prepack` builds, then runs `strip`; `postpack` runs `restore`, which writes the saved file back
// byte for byte (the same trick as pinst, which does it for a `postinstall`).
//   node scripts/pack-manifest.mjs strip|restore   (run in the package's folder, as npm runs its scripts)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const MANIFEST = 'package.json';
/** Beside it, outside the tarball (npm packs only "files"); left in sight by a pack that stopped half-way. */
const SAVED = 'package.json.packing';

function restore() {
  if (!existsSync(SAVED)) return;
  writeFileSync(MANIFEST, readFileSync(SAVED));
  rmSync(SAVED);
}

function strip() {
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  if (manifest.scripts?.prepare === undefined) {
    // A pack that failed between prepack and postpack left package.json stripped and the original saved.
    if (existsSync(SAVED)) {
      restore();
      strip();
      return;
    }
    throw new Error('package.json has no "prepare" script to keep out of the tarball: nothing would build dist/ for a git install.');
  }
  const { prepare: _prepare, ...scripts } = manifest.scripts;
  writeFileSync(SAVED, text);
  writeFileSync(MANIFEST, `${JSON.stringify({ ...manifest, scripts }, null, 2)}\n`);
}

const command = process.argv[2];
if (command === 'strip') strip();
else if (command === 'restore') restore();
else {
  console.error('Usage: node scripts/pack-manifest.mjs strip|restore (npm runs it as prepack and postpack)');
  process.exit(2);
}
