; Cairn's Windows installer (Inno Setup 6), made from the PyInstaller bundle.
;
;   python packaging\render_icons.py build\icons
;   python -m PyInstaller packaging\cairn.spec --noconfirm --distpath build\pyinstaller\dist --workpath build\pyinstaller\work
;   iscc /DAppVersion=0.1.0 packaging\windows\cairn.iss
;
; The version is pyproject.toml's; the workflow (build-windows.yml) reads it and passes it in.
; Installs for the current user by default (no administrator prompt); the setup page offers
; "for all users" too. Chats and settings live in %APPDATA%\Cairn and stay when Cairn is
; uninstalled.

#ifndef AppVersion
  #error Pass the version from pyproject.toml: iscc /DAppVersion=X.Y.Z packaging\windows\cairn.iss
#endif
#define Root "..\.."

[Setup]
AppId={{6A5E2274-BE9D-4847-8514-BF58D061DB4B}
AppName=Cairn
AppVersion={#AppVersion}
AppVerName=Cairn {#AppVersion}
AppPublisher=Cairn
DefaultDirName={autopf}\Cairn
DefaultGroupName=Cairn
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#Root}\dist
OutputBaseFilename=cairn-{#AppVersion}-windows-x64-setup
SetupIconFile={#Root}\build\icons\cairn.ico
UninstallDisplayIcon={app}\cairnw.exe
UninstallDisplayName=Cairn
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
; The whole onedir bundle: cairnw.exe (the window, no console), cairn.exe (the command line) and _internal.
Source: "{#Root}\build\pyinstaller\dist\cairn\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; A newer bundle may have dropped files an older one had: start from a clean _internal.
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{group}\Cairn"; Filename: "{app}\cairnw.exe"; Comment: "Chat with any OpenAI-compatible model"
Name: "{group}\{cm:UninstallProgram,Cairn}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\Cairn"; Filename: "{app}\cairnw.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\cairnw.exe"; Description: "{cm:LaunchProgram,Cairn}"; Flags: nowait postinstall skipifsilent
