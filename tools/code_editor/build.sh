#!/bin/sh
# Rebuild course/static/code_editor.js, the coding exercise's editor
# (CodeMirror 6 as an anywidget module), from index.js and the npm packages
# pinned in package-lock.json. Needs node and npm; the learner's machine
# needs neither: the bundle is committed and shipped in the package.
# Usage: sh tools/code_editor/build.sh
# tests/exercises/test_code_editor.py checks that the committed bundle was built from
# this index.js and this lock (the banner holds their SHA-256).
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
digest=$(cat package-lock.json index.js | sha256sum | cut -d' ' -f1)
node_modules/.bin/esbuild index.js --bundle --format=esm --minify --legal-comments=eof \
    --target=es2020 \
    --banner:js="// Built by tools/code_editor/build.sh from index.js and package-lock.json (sha256 $digest). CodeMirror 6 (MIT licence, Marijn Haverbeke and others)." \
    --outfile=../../course/static/code_editor.js
echo "wrote course/static/code_editor.js (sources sha256 $digest)"
