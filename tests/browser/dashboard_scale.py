"""Measures the dashboard against a large cluster (dashboard_scale.sh starts it)."""
import argparse
import statistics
import sys
import time

from selenium.webdriver.support.ui import WebDriverWait

from chromium import browser


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    driver = browser()
    wait = WebDriverWait(driver, 120, poll_frequency=0.05)
    try:
        # Long tasks: main-thread work over 50 ms, the browser's own measure of jank.
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.longTasks = [];
            new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => e.duration)))
                .observe({ type: "longtask", buffered: true });"""})
        started = time.monotonic()
        driver.get(args.server + "/ui/")
        cells = wait.until(lambda d: d.execute_script("return document.querySelector('canvas.heatmap')?.dataset.cells"))
        first = time.monotonic() - started
        print(f"overview: {cells} GPU cells drawn {first:.2f} s after navigation")
        # Let the page follow the cluster for a while: periodic and event-driven refreshes.
        refreshes, draws = [], []
        seen = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            stats = driver.execute_script("return window.tesseraStats")
            if stats and stats != seen:
                seen = stats
                refreshes.append(stats["refreshMs"])
                draws.append(stats["heatmapDrawMs"])
            time.sleep(0.2)
        long_tasks = driver.execute_script("return window.longTasks")
        print(f"overview refresh (4 API calls + render): median {statistics.median(refreshes):.0f} ms over {len(refreshes)} refreshes; "
              f"heatmap draw median {statistics.median(draws):.1f} ms")
        print(f"main-thread long tasks over 20 s: {len(long_tasks)}, longest {max(long_tasks, default=0):.0f} ms, "
              f"total {sum(long_tasks):.0f} ms")
        driver.save_screenshot(f"{args.screenshots}/dashboard-25k-overview.png")

        for name, hash_, selector in (("jobs (500 rows)", "#/jobs?state=active", "table.jobs tr[data-job]"),
                                      ("nodes (500 of 3,125 rows)", "#/nodes", "table.nodes tr[data-node]")):
            started = time.monotonic()
            driver.execute_script("location.hash = arguments[0]", hash_)
            rows = wait.until(lambda d: d.execute_script("return document.querySelectorAll(arguments[0]).length", selector))
            shown = time.monotonic() - started
            refresh = driver.execute_script("return window.tesseraStats.refreshMs")
            print(f"{name}: {rows} rows shown {shown:.2f} s after navigation (fetch and render {refresh:.0f} ms)")
        driver.save_screenshot(f"{args.screenshots}/dashboard-25k-nodes.png")
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a page that never rendered: the figures are meaningless
        print(f"FAIL: {error}", file=sys.stderr)
        sys.exit(1)
