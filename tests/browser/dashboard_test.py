"""Drives the dashboard in headless Chromium and checks it against the API.

Run by dashboard.sh, which starts the cluster; see there."""
import argparse
import json
import subprocess
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from chromium import browser


def api(server, path):
    with urllib.request.urlopen(server + path, timeout=10) as response:
        return json.load(response)


class Check:
    def __init__(self, driver, server):
        self.driver, self.server = driver, server
        self.last = None  # what a predicate saw last, for the failure message

    def wait(self, what, predicate, timeout=15):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda d: predicate())
        except TimeoutException:
            raise AssertionError(f"timed out waiting for {what}; last seen: {self.last}") from None

    # Views re-render on every refresh, so element handles go stale: read
    # through the page's own DOM in one step instead.
    def text(self, css):
        return self.driver.execute_script("return document.querySelector(arguments[0])?.innerText ?? null", css)

    def count(self, css):
        return self.driver.execute_script("return document.querySelectorAll(arguments[0]).length", css)

    def show(self, hash_):
        self.driver.execute_script("location.hash = arguments[0]", hash_)

    def console_errors(self):
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--tessera", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--job", required=True, type=int)
    parser.add_argument("--marker", required=True)
    args = parser.parse_args()
    driver = browser()
    c = Check(driver, args.server)
    try:
        # --- Overview: the heatmap has a cell per GPU; tiles and legend match the API.
        started = time.monotonic()
        driver.get(args.server + "/")  # the root leads to /ui/
        assert driver.current_url.endswith("/ui/"), driver.current_url
        gpu_map = api(args.server, "/v1/cluster/gpus")
        total = sum(len(n["gpus"]) for n in gpu_map["nodes"])
        c.wait("the heatmap", lambda: driver.execute_script(
            "return document.querySelector('canvas.heatmap')?.dataset.cells") == str(total))
        print(f"overview with the heatmap drawn: {time.monotonic() - started:.2f} s after navigation")
        driver.execute_script("window.notReloaded = true")

        def legend_matches():
            counts = api(args.server, "/v1/cluster/gpus")["counts"]
            shown = driver.execute_script("""return Object.fromEntries([...document.querySelectorAll('.legend [data-cell]')]
                .map((e) => [e.dataset.cell, e.querySelector('b').innerText]))""")
            c.last = (shown, counts)
            return shown == {k: str(v) for k, v in counts.items()} and counts["idle"] == 2 and counts["shared"] == 1
        c.wait("the legend's counts to match GET /v1/cluster/gpus (train's two GPUs idle, one shared)", legend_matches)
        cluster = api(args.server, "/v1/cluster")
        assert c.text("[data-field=gpus] .value") == "6", c.text("[data-field=gpus] .value")
        c.wait("the allocated tile", lambda: c.text("[data-field=allocated] .value") == f"{api(args.server, '/v1/cluster')['allocatedGpus']:g}")
        assert c.text("[data-field=running] .value") == str(cluster["runningJobs"])
        research = next(q for q in api(args.server, "/v1/queues")["queues"] if q["name"] == "research")
        assert c.text("tr[data-queue=research] [data-field=allocated]") == f"{research['allocatedGpus']:g}"
        assert c.text("tr[data-queue=research] [data-field=guaranteed]") == "2"
        assert driver.find_elements(By.CSS_SELECTOR, ".chart svg polyline"), "the utilization chart"
        driver.save_screenshot(f"{args.screenshots}/dashboard-overview.png")

        # Hovering a GPU names it; clicking opens its node.
        canvas = driver.find_element(By.CSS_SELECTOR, "canvas.heatmap")
        webdriver.ActionChains(driver).move_to_element_with_offset(canvas, -canvas.size["width"] // 2 + 3,
                                                                   -canvas.size["height"] // 2 + 17).perform()
        c.wait("the tooltip", lambda: "GPU 0" in (c.text(".tooltip") or ""))
        webdriver.ActionChains(driver).click().perform()
        c.wait("the node page", lambda: c.count("table.gpus tr[data-gpu]") > 0)

        # --- The node page: each GPU's state, utilization and the job holding it.
        c.show("#/nodes/gpu-a")
        c.wait("gpu-a's four GPUs", lambda: c.count("table.gpus tr[data-gpu]") == 4)
        node = api(args.server, "/v1/nodes/gpu-a")
        for gpu in node["gpus"]:
            row = c.text(f"table.gpus tr[data-gpu='{gpu['index']}']")
            assert gpu["cell"] in row, (gpu, row)
            for job in gpu["jobs"]:
                assert f"#{job}" in row, (gpu, row)
        c.wait("the node's events", lambda: "NodeRegistered" in (c.text("table.events") or ""))

        # --- The node list, and its filter.
        c.show("#/nodes")
        c.wait("both nodes", lambda: c.count("table.nodes tr[data-node]") == 2)
        c.show("#/nodes?filter=leaf-b")
        c.wait("the filtered node list", lambda: c.count("table.nodes tr[data-node]") == 1 and "gpu-b" in c.text("table.nodes"))

        # --- Jobs: the list matches the API, and a new job appears without a reload.
        c.show("#/jobs?state=all")
        listed = api(args.server, "/v1/jobs")["jobs"]
        c.wait("every job listed", lambda: c.count("table.jobs tr[data-job]") == len(listed))
        for job in listed:
            row = c.text(f"table.jobs tr[data-job='{job['id']}']")
            assert job["name"] in row and job["state"] in row, (job, row)
        c.show("#/jobs?state=active&name=late")
        c.wait("the filtered, empty list", lambda: c.text(".muted") == "0 jobs")
        late = json.loads(subprocess.run([args.tessera, "submit", "-o", "json", "--server", args.server, "--name", "late",
                                          "--", "sleep", "300"], check=True, capture_output=True, text=True).stdout)
        late_id = late["jobs"][0]["id"]
        c.wait("the new job to appear live", lambda: c.count(f"tr[data-job='{late_id}']") == 1)
        assert driver.execute_script("return window.notReloaded") is True, "the page reloaded"

        # --- A job's page: placement as the API has it, events, and its log followed live.
        c.show(f"#/jobs/{args.job}")
        job = api(args.server, f"/v1/jobs/{args.job}")
        c.wait("the task table", lambda: c.count("table.tasks tr[data-task]") == len(job["tasks"]))
        for task in job["tasks"]:
            row = c.text(f"table.tasks tr[data-task='{task['name']}']")
            assert task["node"] in row and ", ".join(map(str, task["gpus"])) in row, (task, row)
        assert c.text("[data-field=queue]") == "research"
        assert "JobScheduled" in c.text("table.events") and "JobRunning" in c.text("table.events"), c.text("table.events")
        c.wait("the log", lambda: "step 1 loss" in (c.text("pre.logs") or ""))
        first = c.text("pre.logs").count("\n")
        c.wait("the log to grow live", lambda: (c.text("pre.logs") or "").count("\n") > first + 3)
        driver.save_screenshot(f"{args.screenshots}/dashboard-job.png")

        # Cancel from the page; the API agrees.
        c.show(f"#/jobs/{late_id}")
        c.wait("the cancel button", lambda: c.text("h1 button") == "Cancel")
        driver.execute_script("window.confirm = () => true; document.querySelector('h1 button').click()")
        c.wait("the job cancelled", lambda: api(args.server, f"/v1/jobs/{late_id}")["state"] == "cancelled")
        c.wait("the page to show it", lambda: "cancelled" in (c.text("h1 .badge") or ""))

        # --- An unknown job: the server's message, not a blank page.
        c.show("#/jobs/999999")
        c.wait("the error", lambda: "no job 999999" in (c.text(".error") or ""))

        # --- Narrow screens: nothing wider than the window.
        driver.set_window_size(420, 900)
        c.show("#/")
        c.wait("the overview again", lambda: c.count("canvas.heatmap[data-cells]") == 1)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than a narrow window"
        driver.save_screenshot(f"{args.screenshots}/dashboard-narrow.png")

        # The 404 for the unknown job is the only error the console may show.
        errors = [e for e in c.console_errors() if "999999" not in e["message"]]
        assert not errors, f"console errors: {errors}"
        print("dashboard: all checks passed")
    finally:
        driver.quit()


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print(f"FAIL: {error}", file=sys.stderr)
        sys.exit(1)
