"use strict";
// The page's copy for when the Pi cannot be reached (Wi-Fi gone, the Pi restarting): the page itself
// and the last answer to each of its reads, served marked as old, so the page shows the last data and
// says so. Everything is asked of the Pi first; writes and the live stream always go to it.
// Browsers run this only where the page is a secure context: on this machine (127.0.0.1) or over
// HTTPS, not over plain HTTP on the LAN.
const SHELL = "quench-page", DATA = "quench-data";
const PAGE = ["/", "/app.js", "/app.css", "/icon.svg", "/icon-192.png", "/manifest.webmanifest"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(PAGE)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (event) => { event.waitUntil(self.clients.claim()); });

self.addEventListener("fetch", (event) => {
  const request = event.request, url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || url.pathname === "/api/events") return;
  const api = url.pathname.startsWith("/api/");
  // One page for every ?person= and ?date=: its script reads them.
  const key = api ? request.url : url.origin + url.pathname;
  event.respondWith((async () => {
    const cache = await caches.open(api ? DATA : SHELL);
    // A wait of its own, shorter than the page's (15 s), and not the page's: aborted with the page's, the
    // worker's fetch fell to its copy after the page had given up, and the copy was never shown.
    const giveUp = new AbortController();
    const timer = setTimeout(() => giveUp.abort(), 10000);
    try {
      const response = await fetch(request, { signal: giveUp.signal });
      if (response.ok) await cache.put(key, response.clone());
      return response;
    } catch (error) {
      const kept = await cache.match(key);
      if (!kept) throw error;
      const headers = new Headers(kept.headers);
      headers.set("X-Quench-Offline", "1");
      return new Response(await kept.blob(), { status: kept.status, statusText: kept.statusText, headers });
    } finally {
      clearTimeout(timer);
    }
  })());
});
