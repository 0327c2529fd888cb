import FoundationEssentials

/// The page: one HTML file, one stylesheet, one small script, its icons, its manifest and service worker, all
/// compiled in from `Page/` (the EmbedPage build-tool plugin turns them into
/// `PageFiles`), so the Pi serves everything itself (no CDN, no web fonts),
/// works with no internet, and quench-web, installed alone, reads no files.
enum Assets {
    /// Everything comes from this server; the charts' inline SVG carries a `<style>`.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    /// Page/icon.svg.
    static let icon = PageFile(PageFiles.iconSVG)

    /// Page/index.html.
    static let page = PageFile(PageFiles.indexHTML)

    /// Page/page.css.
    static let style = PageFile(PageFiles.pageCSS)

    /// Page/page.js, the page's only script: fetches the API, fills the page in,
    /// and refetches when the server says the history changed. No framework: a
    /// Pi 3 and an old phone both run it at once.
    static let script = PageFile(PageFiles.pageJS)

    /// Page/manifest.webmanifest: "Add to Home Screen" opens the page standalone, with its icon.
    static let manifest = PageFile(PageFiles.manifestWEBMANIFEST)

    /// Page/sw.js, the service worker: the last data when the Pi cannot be reached.
    static let serviceWorker = PageFile(PageFiles.swJS)

    /// Page/icon-192.png and icon-512.png (scripts/page-icons.sh draws them): the home screen's
    /// icons, which Android asks for as PNG and iOS takes only as PNG. Already compressed: no gzip.
    static let icon192 = PageFile(png: PageFiles.icon192PNG)
    static let icon512 = PageFile(png: PageFiles.icon512PNG)
}
