#!/bin/sh
# Adds the Cairn in this folder to your application menu, and `cairn` to ~/.local/bin.
# Nothing outside your home folder is touched. `./install.sh --uninstall` takes it out again.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
bin=$HOME/.local/bin
entry=$data/applications/cairn.desktop

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$entry" "$data"/icons/hicolor/*/apps/cairn.png "$data"/icons/hicolor/scalable/apps/cairn.svg
    if [ -L "$bin/cairn" ]; then rm -f "$bin/cairn"; fi
    echo "Cairn is out of your application menu. Your chats and settings are kept; delete this folder to remove the program."
    exit 0
fi

case $here in
    *[\"\`\$\\]* | *"
"*)
        echo "install.sh: this folder's path ($here) has a quote, backquote, dollar, backslash or newline, which a" \
            "desktop entry cannot name; move the folder and run install.sh again." >&2
        exit 2 ;;
esac

for icon in "$here"/icons/hicolor/*/apps/cairn.*; do
    size=$(basename "$(dirname "$(dirname "$icon")")")
    mkdir -p "$data/icons/hicolor/$size/apps"
    cp "$icon" "$data/icons/hicolor/$size/apps/"
done

mkdir -p "$data/applications"
sed "s|^Exec=.*|Exec=\"$here/cairn\"|" "$here/cairn.desktop" >"$entry.tmp"
mv "$entry.tmp" "$entry"

mkdir -p "$bin"
if [ -e "$bin/cairn" ] && [ ! -L "$bin/cairn" ]; then
    echo "install.sh: $bin/cairn exists and is not a link this script made; left as it is." >&2
else
    ln -sfn "$here/cairn" "$bin/cairn"
fi

if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database "$data/applications" >/dev/null 2>&1 || true
fi
echo "Cairn is in your application menu; \`cairn\` runs from a terminal if $bin is on your PATH."
