"""What Pippa remembers: the memory page's services, views, API and links to turns."""
