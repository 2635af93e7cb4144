"""What every room draws with: the theme's tokens and style sheet, the icons, banners,
a collapsible area, and the request parameter fields that chat settings and assistants share."""
