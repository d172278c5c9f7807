//! The engine's tests by area, against the fake upstream and virtual clock of [`kit`].

mod bounds;
mod cursor;
mod dialects;
mod evidence;
mod exact;
mod fanout;
mod first_page;
mod kinds;
mod kit;
mod learned;
mod link_end;
mod omitted_lists;
mod page_count;
mod parallel;
mod present;
mod presenting_inputs;
mod props;
mod resume;
mod walk;
