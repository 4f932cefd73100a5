#!/usr/bin/env python3
"""The audit console in a real browser: headless Chromium driven by Selenium.

Builds a demo store with the `jsonledger` tool, serves it with a token, and walks the pages a
person auditing imports would: the timeline, a batch with a field's before and after, a value
holding <script> shown as text, a revert refused without the token, the revert plan, a revert
with the token and the new batch it wrote, a migration marked and told in the new terms; then a
hostile batch of 2,000 objects (markup, `javascript:` URLs, right-to-left overrides, a 10 MB
value) paged and escaped with every page under 200 KB and nothing reported to the Content-
Security-Policy's report address, every page at a phone's width (390 px), and axe-core's
accessibility check of each page (axe-selenium-python from PyPI). Screenshots at 1400 and 390 px
go to .build/console-screenshots/. Exits non-zero on the first failed check.

    JSONLEDGER=.build/debug/jsonledger python3 Tests/Browser/console_test.py
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.environ.get("JSONLEDGER", os.path.join(ROOT, ".build", "debug", "jsonledger"))
SHOTS = os.path.join(ROOT, ".build", "console-screenshots")
TOKEN = "browser-test-token-0123456789abcdef"


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print("ok -", message)


def run(*arguments):
    subprocess.run([TOOL, *arguments], check=True, stdout=subprocess.DEVNULL)


def demo_model_version_2():
    """The demo's model (`jsonledger demo`) with Album.label renamed imprint and Band.genre added."""
    many = {"many": True}
    return {
        "keyCase": "snake_case", "dateFormat": "iso8601",
        "entities": {
            "Band": {"identity": "name", "collectionKey": "bands",
                     "attributes": {"name": "string", "formed": "int32", "disbanded": "int32",
                                    "bandDescription": "string", "otherNames": "string", "hiatus": "string",
                                    "genre": "string"},
                     "relationships": {"albums": {"to": "Album", **many, "inverse": "band"},
                                       "members": {"to": "BandMember", **many, "inverse": "band", "ordered": True}}},
            "Album": {"identity": "name",
                      "attributes": {"name": "string", "released": "date",
                                     "imprint": {"type": "string", "renamedFrom": "label"}, "releasedAs": "string"},
                      "relationships": {"band": {"to": "Band", "inverse": "albums"}}},
            "BandMember": {"identity": "id",
                           "attributes": {"id": "string", "instruments": "string", "joined": "int32", "left": "int32"},
                           "relationships": {"band": {"to": "Band", "inverse": "members"},
                                             "musician": {"to": "Musician", "inverse": "bands"}}},
            "Musician": {"identity": "name",
                         "attributes": {"name": "string", "born": "int32", "dead": "int32", "instruments": "string"},
                         "relationships": {"bands": {"to": "BandMember", **many, "inverse": "musician"}}},
        },
    }


def metrics_text(base):
    with urllib.request.urlopen(base + "/metrics") as response:
        return response.read().decode()


def start_server(store, token_file, *options):
    server = subprocess.Popen(
        [TOOL, "serve", store, "--port", "0", "--token-file", token_file, *options],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = server.stdout.readline()
        if line.startswith("serving "):
            return server, line.split(" at ")[1].strip().rstrip("/")
        if server.poll() is not None:
            break
    server.kill()
    raise AssertionError("jsonledger serve did not say where it listens")


def head(base):
    with urllib.request.urlopen(base + "/healthz") as response:
        return json.load(response)["head"]


def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        options.add_argument(argument)
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"]:
        if os.path.exists(candidate):
            options.binary_location = candidate
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver_path), options=options)


def main():
    os.makedirs(SHOTS, exist_ok=True)
    work = tempfile.mkdtemp(prefix="jsonledger-console-")
    store = os.path.join(work, "store")
    run("demo", store)
    payload = os.path.join(work, "script.json")
    with open(payload, "w") as file:
        json.dump({"bands": [{"name": "<script>window.pwned = 1</script>", "formed": 2026,
                              "description": "A long description " + "that goes on and on " * 30}]}, file)
    run("import", store, payload, "--message", "<b>a script in a value</b>", "--author", "mallory")
    token_file = os.path.join(work, "token")
    with open(token_file, "w") as file:
        file.write(TOKEN + "\n")
    server, base = start_server(store, token_file)
    driver = browser()
    wait = WebDriverWait(driver, 10)
    try:
        # The timeline: newest first, every batch a link.
        driver.get(base + "/")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Timeline", "the timeline opens")
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        check(len(rows) == 4, "the timeline lists the four batches (the demo's three and one)")
        check("<b>a script in a value</b>" in rows[0].text, "a message with markup shows as text")
        bars = driver.find_elements(By.CSS_SELECTOR, "figure.chart svg a")
        check(len(bars) == 4, "the timeline's chart has a bar per batch, each a link")
        driver.save_screenshot(os.path.join(SHOTS, "1-timeline.png"))

        # Every field has a label, and the keyboard reaches the first link first.
        for field in driver.find_elements(By.CSS_SELECTOR, "input, select"):
            field_id = field.get_attribute("id")
            check(bool(driver.find_elements(By.CSS_SELECTOR, f"label[for='{field_id}']")), f"input {field_id} has a label")
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
        check(driver.switch_to.active_element.tag_name == "a", "Tab moves the focus to the first link")

        # A batch: its changes by entity, each field before and after.
        driver.find_element(By.LINK_TEXT, "2").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Batch 2"))
        label_rows = [row for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr") if row.text.startswith("label")]
        check(any(row.find_element(By.CSS_SELECTOR, "td.old").text and row.find_element(By.CSS_SELECTOR, "td.new").text
                  for row in label_rows), "batch 2 shows a label's value before and after")
        driver.save_screenshot(os.path.join(SHOTS, "2-batch.png"))

        # A <script> value is text on the batch page and the object page, and never runs.
        driver.get(base + "/batches/4")
        check("<script>window.pwned = 1</script>" in driver.find_element(By.TAG_NAME, "main").text,
              "a <script> value shows as text")
        check(driver.execute_script("return window.pwned === undefined"), "the <script> value did not run")
        driver.find_element(By.PARTIAL_LINK_TEXT, "Band <script>").click()
        wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "caption")))
        check(driver.execute_script("return window.pwned === undefined"), "nor on the object page")
        # A long value is one line that opens to the whole.
        summary = driver.find_element(By.CSS_SELECTOR, "details.value summary")
        check(summary.size["height"] < 40, "a long value shows as one line")
        summary.click()
        check("goes on and on" in driver.find_element(By.CSS_SELECTOR, "details.value pre").text,
              "the line opens to the whole value")
        driver.save_screenshot(os.path.join(SHOTS, "3-object-with-script-value.png"))

        # A revert without the token is refused, and nothing is written.
        driver.get(base + "/batches/4")
        driver.find_element(By.CSS_SELECTOR, "button[data-revert='4']").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "Refused (401)"))
        check(head(base) == 4, "a write without the token is refused and writes nothing")
        driver.save_screenshot(os.path.join(SHOTS, "4-revert-refused-without-token.png"))

        # With the token: the plan of a conflicting revert, then a revert and its new batch.
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "token-status"), "token saved"))
        driver.get(base + "/batches/1")
        driver.find_element(By.CSS_SELECTOR, "button[data-revert-plan='1']").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "would be refused"))
        check(driver.find_element(By.ID, "keep-later").is_displayed(),
              "a conflicting plan offers to revert keeping the later changes")
        check(not driver.find_element(By.ID, "force-revert").is_displayed(), "forcing is not offered at once")
        conflicts = driver.find_element(By.ID, "result").text
        check("changed it since" in conflicts and "{" not in conflicts, "the conflicts are said in words: " + conflicts)
        driver.find_element(By.ID, "show-force").click()
        force = driver.find_element(By.ID, "force-revert")
        check(force.is_displayed() and not force.is_enabled(), "forcing waits for the batch number")
        driver.find_element(By.ID, "force-batch").send_keys("7")
        check(not force.is_enabled(), "a wrong number does not confirm")
        driver.find_element(By.ID, "force-batch").clear()
        driver.find_element(By.ID, "force-batch").send_keys("1")
        check(force.is_enabled(), "the batch's number confirms")
        driver.save_screenshot(os.path.join(SHOTS, "5-revert-plan-conflicts.png"))
        driver.find_element(By.ID, "cancel-revert").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "Cancelled"))
        check(head(base) == 4, "cancelling writes nothing")
        driver.get(base + "/batches/4")
        driver.find_element(By.CSS_SELECTOR, "button[data-revert-plan='4']").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "would write"))
        driver.find_element(By.CSS_SELECTOR, "button[data-revert='4']").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "Reverted: batch 5"))
        check(head(base) == 5, "the revert with the token wrote batch 5")
        driver.find_element(By.ID, "new-batch").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Batch 5"))
        check("revert" in driver.find_element(By.CSS_SELECTOR, "dd.kind").text, "the new batch is a revert")
        driver.save_screenshot(os.path.join(SHOTS, "6-revert-batch.png"))
        driver.get(base + "/")
        check(driver.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text.startswith("5"),
              "the new batch heads the timeline")
        check("reverted by 5" in driver.find_elements(By.CSS_SELECTOR, "tbody tr")[1].text,
              "the timeline marks the reverted batch")
        driver.get(base + "/batches/4")
        check("Already reverted by batch 5" in driver.find_element(By.TAG_NAME, "main").text
              and not driver.find_elements(By.CSS_SELECTOR, "[data-revert]"),
              "a reverted batch says so and offers no second revert")

        # At a phone's width every page fits: wide tables scroll inside themselves.
        driver.set_window_size(390, 844)
        for name, path in [("timeline", "/"), ("batch", "/batches/2"), ("entity", "/entities/Album"),
                           ("object", "/objects/Band/Japan")]:
            driver.get(base + path)
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            check(overflow <= 0, f"the {name} page fits a 390 px screen (overflows by {overflow} px)")
            hint = driver.find_element(By.ID, "token-use").rect
            check(hint["height"] < 40, f"the token's hint takes at most two lines on the {name} page "
                  f"({hint['height']} px high)")
            driver.save_screenshot(os.path.join(SHOTS, f"9-phone-{name}.png"))
        driver.set_window_size(1400, 1000)

        # The entity browser and an object as of an earlier batch.
        driver.get(base + "/entities/Album?sort=-released")
        check(len(driver.find_elements(By.CSS_SELECTOR, "tbody tr")) == 8, "the entity browser lists the albums")
        first = driver.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text
        check("1991-04-08" in first and '"' not in first, "a date reads as text, unquoted: " + first)
        driver.save_screenshot(os.path.join(SHOTS, "7-entity.png"))
        driver.get(base + "/objects/Band/Japan?asOf=1")
        check("as of batch 1" in driver.find_element(By.TAG_NAME, "caption").text, "an object reads as of a batch")
        driver.save_screenshot(os.path.join(SHOTS, "8-object-as-of.png"))

        # The feed of changes carries a batch that another process writes.
        feed = urllib.request.urlopen(base + "/v1/changes", timeout=20)
        check(feed.readline().startswith(b": jsonledger changes"), "the feed of changes opens")
        more = os.path.join(work, "more.json")
        with open(more, "w") as file:
            json.dump([{"name": "Can", "formed": 1968}], file)
        run("import", store, more, "--entity", "Band", "--author", "another process")
        lines = []
        while not any(line.startswith(b"data: ") for line in lines):
            lines.append(feed.readline())
        check(b"id: 6\n" in lines, "the feed sends batch 6, written by another process, as event 6")
        feed.close()

        # Prometheus metrics: the ledger's figures and the server's requests.
        with urllib.request.urlopen(base + "/metrics") as response:
            metrics = response.read().decode()
        check("jsonledger_head 6" in metrics, "/metrics says the head")
        check("http_server_request_duration" in metrics, "/metrics times the requests")

        # A hostile batch of 2,000 objects: markup, `javascript:` URLs, right-to-left
        # overrides in every field, and a 10 MB value. Escaped, cut, paged, and no script runs.
        hostile = os.path.join(work, "hostile.json")
        with open(hostile, "w") as file:
            json.dump({"musicians": [{"name": f"\"><script>window.pwned = {n}</script> \u202e{n}",
                                      "instruments": "javascript:window.pwned=1 <img src=x onerror=window.pwned=1>",
                                      "born": 1900 + n % 100} for n in range(2000)],
                       "bands": [{"name": "Huge", "description": "ten megabytes " * 750_000}]}, file)
        run("import", store, hostile, "--author", "<img src=x onerror=window.pwned=1>")
        for path in ["/batches/7", "/batches/7?page=41", "/batches/7?entity=Band", "/objects/Band/Huge",
                     "/entities/Musician", "/diff?from=6&to=7"]:
            with urllib.request.urlopen(base + path) as response:
                size = len(response.read())
            check(size < 200_000, f"{path} is under 200 KB ({size} bytes)")
            driver.get(base + path)
            check(driver.execute_script("return window.pwned === undefined"), f"no script ran on {path}")
        driver.get(base + "/batches/7")
        check("page 1 of 41" in driver.find_element(By.TAG_NAME, "main").text, "2,001 changes are 41 pages of 50")
        # Nothing the policy blocked on those pages: the browser reported nothing. Then a
        # script put inline into the page is blocked, and reported.
        check("jsonledger_csp_reports_total 0" in metrics_text(base), "no CSP report from the hostile pages")
        driver.execute_script(
            "const s = document.createElement('script'); s.textContent = 'window.pwned = 2';"
            " document.body.appendChild(s);")
        check(driver.execute_script("return window.pwned === undefined"), "an inline script is blocked")
        deadline = time.time() + 15
        while "jsonledger_csp_reports_total 1" not in metrics_text(base) and time.time() < deadline:
            time.sleep(0.2)
        check("jsonledger_csp_reports_total 1" in metrics_text(base), "the blocked script is reported to /csp-reports")
        driver.save_screenshot(os.path.join(SHOTS, "10-hostile-batch.png"))

        # Keeping later changes: a revert of batch 1 undoes only what no later batch changed.
        driver.get(base + "/batches/1")
        driver.find_element(By.CSS_SELECTOR, "button[data-revert-plan='1']").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "would be refused"))
        driver.find_element(By.ID, "keep-later").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "result"), "Reverted: batch 8"))
        check(head(base) == 8, "keeping later changes wrote batch 8")
        driver.get(base + "/objects/Album/Adolescent%20Sex")
        check("No such object" in driver.find_element(By.TAG_NAME, "main").text,
              "an album only batch 1 touched is gone")
        driver.get(base + "/objects/Album/Tin%20Drum")
        check("No such object" not in driver.find_element(By.TAG_NAME, "main").text
              and "Virgin" in driver.find_element(By.TAG_NAME, "main").text,
              "an album later batches changed is kept, with their changes")
        driver.save_screenshot(os.path.join(SHOTS, "11-kept-later-changes.png"))

        # A migration (Album.label renamed imprint, Band.genre added) is a batch of its own,
        # marked on the timeline; a batch written before it is told in the new model's terms.
        server.terminate()
        server.wait(timeout=10)
        model = os.path.join(work, "model-2.json")
        with open(model, "w") as file:
            json.dump(demo_model_version_2(), file)
        run("migrate", store, "--model", model)
        server, base = start_server(store, token_file)
        driver.get(base + "/")
        newest = driver.find_elements(By.CSS_SELECTOR, "tbody tr")[0]
        check(newest.text.startswith("9") and "migration" in newest.text, "the timeline lists the migration as batch 9")
        check(any(mark.text == "M" for mark in driver.find_elements(By.CSS_SELECTOR, "figure.chart svg text")),
              "the timeline's chart marks the migration")
        driver.get(base + "/batches/9")
        check("migration" in driver.find_element(By.CSS_SELECTOR, "dd.kind").text, "the migration's page says so")
        driver.get(base + "/batches/2")
        fields = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "tbody th[scope=row]")]
        check("imprint" in fields and "label" not in fields, "batch 2's label change reads as imprint after the rename")
        driver.save_screenshot(os.path.join(SHOTS, "12-after-migration.png"))

        # Accessibility: axe-core in the same browser finds nothing serious on any page.
        for path in ["/", "/batches/2", "/batches/4", "/batches/9", "/objects/Band/Japan", "/objects/Band/Japan?asOf=1",
                     "/entities/Album", "/diff?from=1&to=3"]:
            driver.get(base + path)
            axe = Axe(driver)
            axe.inject()
            found = axe.run()
            serious = [v for v in found["violations"] if v.get("impact") in ("serious", "critical")]
            check(not serious, f"axe finds nothing serious on {path}: "
                  + "; ".join(f"{v['id']}: {v['help']} at {[n['html'][:120] for n in v['nodes'][:3]]}"
                              for v in serious))
    finally:
        driver.quit()
        server.terminate()
        server.wait(timeout=10)

    # A client that trickles its body is answered 408 once --body-timeout has passed.
    slow_server, slow_base = start_server(store, token_file, "--body-timeout", "2")
    try:
        host, port = slow_base.split("//")[1].split(":")
        connection = socket.create_connection((host, int(port)))
        connection.settimeout(15)
        connection.sendall(
            b"POST /v1/batches?entity=Band HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"name\"")
        started = time.time()
        answer = connection.recv(4096)
        check(answer.startswith(b"HTTP/1.1 408") and time.time() - started < 10,
              "a body that does not arrive in time is answered 408")
        connection.close()

        # Headers are bounded (Hummingbird's decoder: 80 KB): a 200 KB header is refused with
        # 431 and the API's JSON error, and the connection closed.
        connection = socket.create_connection((host, int(port)))
        connection.settimeout(15)
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
        answer = connection.recv(4096)
        check(answer.startswith(b"HTTP/1.1 431") and b"Connection: close" in answer
              and b'"code":"requestTooLarge"' in answer,
              "a 200 KB header is refused with a JSON error and the connection closed")
        connection.close()
    finally:
        slow_server.terminate()
        slow_server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    print("console test passed; screenshots in", SHOTS)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print("not ok -", failure)
        sys.exit(1)
