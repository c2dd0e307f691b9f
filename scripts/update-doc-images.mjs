#!/usr/bin/env node
// `make screenshots`, after the end-to-end files that take documentation pictures have run:
// copies tests/e2e/artifacts/docs/*.png (docScreenshot in tests/e2e/lib/ui.ts) into
// docs/images/, removes the pictures there that no test takes any more, and writes
// docs/images/screenshots.json with a hash of the editor's UI sources. A Python test
// (tests/packaging/test_doc_images.py) computes the same hash and fails once the UI changed
// since the pictures were made, so they cannot go stale unnoticed.
//
// Usage: node scripts/update-doc-images.mjs          (copy and record)
//        node scripts/update-doc-images.mjs --hash   (print the UI sources' hash only)
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHOTS = path.join(ROOT, 'tests', 'e2e', 'artifacts', 'docs');
const IMAGES = path.join(ROOT, 'docs', 'images');
const RECORD = path.join(IMAGES, 'screenshots.json');
/** What the pictures show comes from these: the extension's code and walkthrough, and the
 * manifest's contributions (commands, menus, views, settings). */
const UI_FOLDERS = ['extension/src', 'extension/walkthrough'];

function filesUnder(dir) {
  const out = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/** JSON with every object's keys sorted, as Python's json.dumps(sort_keys=True,
 * ensure_ascii=False, separators=(",", ":")) writes it. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 over each UI file (path, NUL, bytes, NUL; paths sorted) and then the manifest's
 * "contributes" as canonical JSON. tests/packaging/test_doc_images.py computes the same. */
function uiSourcesHash() {
  const hash = createHash('sha256');
  const files = UI_FOLDERS.flatMap(filesUnder).sort();
  for (const rel of files) {
    hash.update(`${rel}\0`);
    hash.update(fs.readFileSync(path.join(ROOT, rel)));
    hash.update('\0');
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  hash.update(`package.json#contributes\0${canonical(manifest.contributes ?? null)}`);
  return hash.digest('hex');
}

/** Which test file takes each picture (`docScreenshot(page, 'name'`). */
function takers() {
  const out = new Map();
  const dir = path.join(ROOT, 'tests', 'e2e');
  for (const file of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .sort()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/docScreenshot\(\s*\w+\s*,\s*['"`]([a-z0-9-]+)['"`]/g)) {
      out.set(m[1], `tests/e2e/${file}`);
    }
  }
  return out;
}

function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function main() {
  if (process.argv.includes('--hash')) {
    process.stdout.write(`${uiSourcesHash()}\n`);
    return;
  }
  const shots = fs.existsSync(SHOTS)
    ? fs
        .readdirSync(SHOTS)
        .filter((f) => f.endsWith('.png'))
        .sort()
    : [];
  if (shots.length === 0) {
    throw new Error(
      `no pictures in ${path.relative(ROOT, SHOTS)}: run make screenshots, which runs the end-to-end files that take them first`,
    );
  }
  const by = takers();
  const missing = [...by.keys()].filter((name) => !shots.includes(`${name}.png`));
  if (missing.length > 0) {
    throw new Error(
      `the tests take ${missing.map((n) => `${n}.png`).join(', ')} but ${path.relative(ROOT, SHOTS)} lacks them: ` +
        'did one of those test files fail or not run? Nothing was copied.',
    );
  }
  fs.mkdirSync(IMAGES, { recursive: true });
  for (const old of fs.readdirSync(IMAGES).filter((f) => f.endsWith('.png') && !shots.includes(f))) {
    fs.rmSync(path.join(IMAGES, old));
    console.log(`removed docs/images/${old} (no test takes it any more)`);
  }
  const images = {};
  for (const shot of shots) {
    fs.copyFileSync(path.join(SHOTS, shot), path.join(IMAGES, shot));
    images[shot] = { sha256: sha256(path.join(IMAGES, shot)), test: by.get(shot.replace(/\.png$/, '')) ?? null };
    console.log(`docs/images/${shot}`);
  }
  const record = {
    note: 'Written by `make screenshots` (scripts/update-doc-images.mjs): the pictures of docs/images and the hash of the UI sources they show. Do not edit.',
    ui_sources_sha256: uiSourcesHash(),
    images,
  };
  fs.writeFileSync(RECORD, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`wrote docs/images/screenshots.json (${shots.length} pictures)`);
}

try {
  main();
} catch (err) {
  console.error(`update-doc-images: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
