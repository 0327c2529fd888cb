/// The page: one HTML file, one stylesheet, one small script, one icon, its manifest and service worker, all
/// compiled in from `Page/` (the EmbedPage build-tool plugin turns them into
/// `PageFiles`), so the Pi serves everything itself (no CDN, no web fonts),
/// works with no internet, and quench-web, installed alone, reads no files.
enum Assets {
    /// Everything comes from this server; the charts' inline SVG carries a `<style>`.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// Page/icon.svg.
    static let icon = PageFiles.iconSVG

    /// Page/index.html.
    static let page = PageFiles.indexHTML

    /// Page/page.css.
    static let style = PageFiles.pageCSS

    /// Page/page.js, the page's only script: fetches the API, fills the page in,
    /// and refetches when the server says the history changed. No framework: a
    /// Pi 3 and an old phone both run it at once.
    static let script = PageFiles.pageJS

    /// Page/manifest.webmanifest: "Add to Home Screen" opens the page standalone, with its icon.
    static let manifest = PageFiles.manifestWEBMANIFEST

    /// Page/sw.js, the service worker: the last data when the Pi cannot be reached.
    static let serviceWorker = PageFiles.swJS
}
