/// The page at `GET /`: a phone field and a Send button.
enum DemoPage {
    static let html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>resendgate</title></head>
        <body><h1>resendgate</h1><p>POST /v1/sends with {"phone": "+8613800138000"}.</p></body></html>
        """
}
