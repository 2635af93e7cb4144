#!/bin/sh
# What `make package-test` needs beyond the build: dpkg-deb, dbus-run-session and
# gnome-keyring-daemon (the frozen keyring check), desktop-file-validate (the menu entry) and
# Xvfb (the window on X11). As root it installs what is missing; otherwise it says what to install.
set -eu
missing=""
command -v dpkg-deb >/dev/null 2>&1 || missing="$missing dpkg"
command -v dbus-run-session >/dev/null 2>&1 || missing="$missing dbus-daemon"
command -v gnome-keyring-daemon >/dev/null 2>&1 || missing="$missing gnome-keyring"
command -v desktop-file-validate >/dev/null 2>&1 || missing="$missing desktop-file-utils"
command -v Xvfb >/dev/null 2>&1 || missing="$missing xvfb"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "package-test: installing$missing"
    apt-get install -y -q --no-install-recommends $missing
else
    echo "package-test needs:$missing. Install them (sudo apt-get install$missing) and run it again." >&2
    exit 1
fi
