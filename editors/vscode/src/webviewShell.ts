/**
 * The HTML page both webviews (the answer panel and the docked chat) start from: one stylesheet,
 * one nonce'd script file and an empty `<main>` the script fills with what the host rendered.
 * Written once so the two pages cannot drift apart in their Content-Security-Policy: nothing is
 * allowed by default, styles and fonts only from the extension, images only where the page asks
 * for them (the answer panel), and scripts only with this page's nonce (no inline script or
 * style, no eval). Pure: the caller passes the webview's URIs, so unit tests check the policy.
 */

export interface ShellParts {
  /** `webview.cspSource`: the origin the webview serves extension files from. */
  readonly cspSource: string;
  /** A fresh random nonce per page (base64 of 16 random bytes). */
  readonly nonce: string;
  /** `webview.asWebviewUri(...)` of the page's script and stylesheet. */
  readonly scriptUri: string;
  readonly styleUri: string;
  readonly title: string;
  /** Whether extension images may load (`img-src`); the chat shows none. */
  readonly allowImages: boolean;
  /** A class on `<body>` (the chat's layout), if any. */
  readonly bodyClass?: string;
  /** Markup after `<main>` (the chat's question box); static, never model output. */
  readonly afterMain?: string;
}

/** The page's Content-Security-Policy. */
export function shellCsp(parts: Pick<ShellParts, "cspSource" | "nonce" | "allowImages">): string {
  return [
    "default-src 'none'",
    `style-src ${parts.cspSource}`,
    `font-src ${parts.cspSource}`,
    ...(parts.allowImages ? [`img-src ${parts.cspSource}`] : []),
    `script-src 'nonce-${parts.nonce}'`,
  ].join("; ");
}

export function webviewShell(parts: ShellParts): string {
  const body = parts.bodyClass ? `<body class="${parts.bodyClass}">` : "<body>";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${shellCsp(parts)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${parts.styleUri}">
<title>${parts.title}</title>
</head>
${body}
<main id="content" aria-live="polite"></main>
${parts.afterMain ? parts.afterMain + "\n" : ""}<script nonce="${parts.nonce}" src="${parts.scriptUri}"></script>
</body>
</html>`;
}
