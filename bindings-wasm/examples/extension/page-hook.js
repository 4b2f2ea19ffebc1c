// Installs the page detector's hook before the page's scripts run (auto-solve mode with score-based widgets).
globalThis.__captchaDlqPage.hook();
