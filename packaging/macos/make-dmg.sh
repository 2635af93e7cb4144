#!/bin/sh
# Cairn-<version>-macos-<arch>.dmg from the PyInstaller app (macOS only: hdiutil).
#
#   python packaging/render_icons.py build/icons          # cairn.icns for the app
#   python -m PyInstaller packaging/cairn.spec --noconfirm --distpath build/pyinstaller/dist --workpath build/pyinstaller/work
#   sh packaging/macos/make-dmg.sh
#
# The disk image holds Cairn.app and a link to /Applications to drag it onto. The app is
# signed ad hoc (PyInstaller does that), not with a Developer ID, so Gatekeeper asks once:
# Control-click Cairn, Open.
set -eu
cd "$(dirname "$0")/../.."
version=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
app=build/pyinstaller/dist/Cairn.app
[ -d "$app" ] || { echo "make-dmg: $app is missing; run PyInstaller on packaging/cairn.spec first." >&2; exit 1; }
stage=build/dmg
rm -rf "$stage"
mkdir -p "$stage" dist
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
target="dist/Cairn-$version-macos-$(uname -m).dmg"
hdiutil create -volname "Cairn $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$target"
echo "$target"
