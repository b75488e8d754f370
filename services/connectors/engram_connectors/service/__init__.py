"""The connectors' use cases: the drop-folder watcher and the Drive poller."""
