#!/usr/bin/env bash
# Refresh the screenshots of the README and docs/SCREENSHOTS.md on purpose (the tests alone write them to an ignored folder):
# runs the two e2e files that take them, with DLPLAY_SCREENSHOTS pointing at assets/screenshots.
#   scripts/refresh_screenshots.sh            # needs Debian's chromium (apt-get install -y chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
export DLPLAY_SCREENSHOTS="$PWD/assets/screenshots"
python -m pytest -q tests/e2e/test_browser.py::test_home_gallery \
  tests/e2e/test_browser.py::test_every_page_renders tests/e2e/test_skeleton_pages.py "$@"
python -m scripts.screenshot_gallery
