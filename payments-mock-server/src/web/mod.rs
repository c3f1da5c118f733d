//! What the mock shows a person: the payer's payment page and the web
//! console, server-rendered HTML (askama templates in `templates/`).

pub mod console;
pub mod html;
pub mod pay;
