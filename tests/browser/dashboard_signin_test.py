"""The dashboard's sign-in against a server with access control.

Run by dashboard_signin.sh, which starts the server and makes the tokens."""
import argparse
import sys

from chromium import browser
from dashboard_test import Check


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--alice", required=True)
    parser.add_argument("--carol", required=True)
    args = parser.parse_args()
    driver = browser()
    c = Check(driver, args.server)
    try:
        driver.get(args.server + "/#/jobs")
        c.wait("the sign-in form", lambda: c.count("#signin") == 1)
        assert c.count("#signout:not([hidden])") == 0, "no sign-out before signing in"

        def sign_in(token):
            driver.execute_script("document.getElementById('token').value = arguments[0];"
                                  "document.querySelector('#signin button').click()", token)

        sign_in("tsr_0123456789abcdef_" + "0" * 64)
        c.wait("the refusal of a forged token", lambda: "unknown token" in (c.text("#signin .error") or ""))

        sign_in(args.alice)
        c.wait("alice's job list", lambda: "alice-train" in (c.text("main") or ""))
        c.last = c.text("main")
        assert "bob-eval" not in c.last, f"a user sees only her jobs: {c.last}"
        assert c.count("#signout:not([hidden])") == 1, "a sign-out button once signed in"
        c.wait("live updates once signed in", lambda: c.text("#live") == "live")
        driver.save_screenshot(f"{args.screenshots}/signin-user-jobs.png")

        driver.find_element("id", "signout").click()
        c.wait("the sign-in form after signing out", lambda: c.count("#signin") == 1)

        sign_in(args.carol)
        c.wait("every job for a viewer", lambda: all(n in (c.text("main") or "") for n in ("alice-train", "bob-eval")))
        c.show("#/")
        c.wait("the overview for a viewer", lambda: c.count("#signin") == 0 and c.count("canvas") >= 1)
        errors = c.console_errors()
        # The 401s before signing in are the server's answers, not page errors.
        errors = [e for e in errors if "401" not in e["message"]]
        assert not errors, f"console errors: {errors}"
        print("dashboard sign-in: forged token refused, user sees her jobs only, viewer sees all, sign-out works")
    except AssertionError as error:
        driver.save_screenshot(f"{args.screenshots}/signin-failure.png")
        print(f"FAIL: {error}", file=sys.stderr)
        sys.exit(1)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
