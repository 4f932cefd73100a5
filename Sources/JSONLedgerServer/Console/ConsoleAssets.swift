// The console's style sheet and script: served from memory, no build step. The script only
// reads the token field, calls the API, and writes results as text (`textContent`), never as
// markup.

enum ConsoleAssets {
  static let css = """
    body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
    header { background: #22313f; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1.5rem; align-items: center; flex-wrap: wrap; }
    header a { color: #fff; }
    header form { margin-left: auto; display: flex; gap: .4rem; align-items: center; }
    main { padding: 1rem 1.2rem 3rem; max-width: 72rem; }
    table { border-collapse: collapse; margin: .5rem 0 1rem; background: #fff; }
    th, td { border: 1px solid #d5d9de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
    th { background: #eef1f4; }
    caption { text-align: left; font-weight: 600; padding: .3rem 0; }
    .old { color: #a4262c; } .new { color: #1e6b30; }
    .kind { font-variant: small-caps; }
    .tag { font-size: .8em; border: 1px solid #8a6d00; color: #5c4800; border-radius: 3px; padding: 0 .3rem; }
    a:focus, button:focus, input:focus, select:focus { outline: 3px solid #f0a000; outline-offset: 1px; }
    button { padding: .3rem .8rem; }
    #result { white-space: pre-wrap; background: #fff; border: 1px solid #d5d9de; padding: .5rem; min-height: 1.5rem; }
    form.filters { display: flex; gap: .6rem; flex-wrap: wrap; align-items: end; margin: .5rem 0; }
    form.filters label { display: flex; flex-direction: column; font-size: .9em; }
    ul.entities { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
    .scroll { overflow-x: auto; max-width: 100%; }
    .hint { font-size: .8em; opacity: .85; }
    td { max-width: 32rem; overflow-wrap: break-word; }
    details.value summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 30rem; }
    details.value pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24rem; overflow: auto; margin: .3rem 0; }
    ul.paths { margin: 0; padding-left: 1.1rem; }
    ins { background: #d7f5dd; text-decoration: none; } del { background: #fbdcdc; }
    .notice { border-left: 4px solid #8a6d00; background: #fff8e1; padding: .4rem .8rem; }
    nav.paging { display: flex; gap: 1rem; margin: .5rem 0; }
    figure.chart { margin: .5rem 0 1rem; max-width: 48rem; }
    figure.chart svg { width: 100%; height: 150px; background: #fff; border: 1px solid #d5d9de; }
    figure.chart figcaption { font-size: .85em; color: #4a4f57; }
    svg.spark { width: 20rem; max-width: 100%; height: 5rem; background: #fff; border: 1px solid #d5d9de; }
    [aria-busy="true"] { cursor: progress; }
    @media (max-width: 600px) {
      main { padding: .6rem; }
      header form { margin-left: 0; flex-wrap: wrap; width: 100%; }
      header form input { flex: 1; min-width: 0; }
      header form .hint { order: 2; flex-basis: 100%; }
      #token-status { order: 3; }
      td { max-width: 16rem; }
      details.value summary { max-width: 14rem; }
    }
    """

  static let javascript = """
    "use strict";
    function token() { return sessionStorage.getItem("jsonledger-token") || ""; }
    function show(text) { document.getElementById("result").textContent = text; }
    document.addEventListener("DOMContentLoaded", () => {
      const field = document.getElementById("token");
      if (field) {
        field.value = token();
        document.getElementById("token-form").addEventListener("submit", (event) => {
          event.preventDefault();
          sessionStorage.setItem("jsonledger-token", field.value);
          document.cookie = "jsonledger_token=" + encodeURIComponent(field.value) + "; path=/; SameSite=Strict";
          document.getElementById("token-status").textContent = field.value ? "token saved" : "token cleared";
        });
      }
      for (const button of document.querySelectorAll("[data-revert-plan]")) {
        button.addEventListener("click", () => plan(button));
      }
      for (const button of document.querySelectorAll("[data-revert]")) {
        button.addEventListener("click", () => revert(button.dataset.revert, button.dataset.mode || ""));
      }
      for (const button of document.querySelectorAll("[data-show-force]")) {
        button.addEventListener("click", () => {
          document.getElementById("force-confirm").hidden = false;
          document.getElementById("force-batch").focus();
        });
      }
      for (const button of document.querySelectorAll("[data-cancel-revert]")) {
        button.addEventListener("click", () => {
          document.getElementById("revert-choices").hidden = true;
          document.getElementById("force-confirm").hidden = true;
          show("Cancelled: nothing was written.");
        });
      }
      const confirmField = document.getElementById("force-batch");
      if (confirmField) {
        confirmField.addEventListener("input", () => {
          const force = document.getElementById("force-revert");
          force.disabled = confirmField.value.trim() !== force.dataset.confirm;
        });
      }
      for (const button of document.querySelectorAll("[data-copy]")) {
        button.addEventListener("click", async () => {
          const text = button.previousElementSibling.textContent;
          try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; }
          catch (error) { button.textContent = "Copy failed: select the text"; }
        });
      }
    });
    function describeConflicts(conflicts) {
      return conflicts.map((c) => "  " + c.description).join("\\n");
    }
    async function plan(button) {
      const batch = button.dataset.revertPlan;
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
      show("Working out what a revert of batch " + batch + " would do…");
      try {
        const response = await fetch("/v1/batches/" + batch + "/revert-plan",
          { headers: { "Authorization": "Bearer " + token() } });
        const body = await response.json();
        if (!response.ok) { show("Error " + response.status + ": " + body.message); return; }
        if (body.alreadyRevertedBy !== null) {
          show("Batch " + batch + " was already reverted by batch " + body.alreadyRevertedBy + ".");
        } else if (body.refused) {
          show("A revert would be refused as it is: " + body.conflicts.length +
            " later change(s) to the same fields:\\n" + describeConflicts(body.conflicts));
          document.getElementById("revert-choices").hidden = false;
          document.getElementById("keep-later").focus();
        } else {
          show("A revert would write " + body.changes.length + " change(s):\\n" + body.changes.map((c) =>
            "  " + c.kind + " " + c.entity + " " + JSON.stringify(c.key)).join("\\n"));
        }
      } catch (error) {
        show("The plan could not be read: " + error);
      } finally {
        button.disabled = false;
        button.removeAttribute("aria-busy");
      }
    }
    async function revert(batch, mode) {
      show("Reverting batch " + batch + "…");
      const response = await fetch("/v1/batches/" + batch + "/revert" + (mode ? "?mode=" + mode : ""),
        { method: "POST", headers: { "Authorization": "Bearer " + token(), "Content-Type": "application/json" } });
      const body = await response.json();
      if (response.status === 201) {
        show("Reverted: batch " + body.batch + " undoes batch " + batch + ".");
        const choices = document.getElementById("revert-choices");
        if (choices) { choices.hidden = true; }
        const link = document.getElementById("new-batch");
        link.href = "/batches/" + body.batch;
        link.textContent = "Open batch " + body.batch;
        link.hidden = false;
        link.focus();
      } else if (response.status === 409 && body.conflicts) {
        show("Refused (409): " + body.message);
        document.getElementById("revert-choices").hidden = false;
      } else {
        show("Refused (" + response.status + "): " + body.message);
      }
    }
    """
}
