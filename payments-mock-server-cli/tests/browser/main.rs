//! Browser tests: the mock's pages driven in headless Chromium over
//! WebDriver, checked with axe-core (issues 15 and 16). One harness for
//! both; `scripts/install-browser.sh` installs the browser.

mod harness;
// Redirect-based payments: the payer's page, end to end (CONTRACT section 13).
mod payment_page;
// The web console (CONTRACT section 14).
mod console;
// Its pages of fault rules and of sandboxes.
mod console_rules;
// A request whose body the journal cut says so.
mod cut_body;
// Live rows: focus kept, stopped updates said (and the bar's focus ring).
mod live;
// Live rows under a burst, a dropped focus, pause (WCAG 2.2.2), announcements.
mod live_updates;
// The console behind an admin key: sign-in, sign-out, a merchant's view (issue 33).
mod sign_in;
// A merchant's return handler and the API calls the tests make.
mod shop;
// The pages while the store's database is gone (issue 23).
mod store_down;
// The contract proxy's console (issue 24).
mod proxy_console;
