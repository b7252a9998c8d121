pub struct Watcher;

impl super::Inner {
    pub fn stop_watching(&self) {
        self.watcher.lock().take();
    }
}
