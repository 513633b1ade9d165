"""The member's pages: views, forms, reads (selectors), writes on their own conversations, navigation."""
